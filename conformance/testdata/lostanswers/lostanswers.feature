@sandbox @faults
Feature: What a request whose answer was lost did to the account
  A planned network fault or delay decides what the client sees; the
  contract decides what the request did. A truncated or trickled request,
  and a delayed one the client waits out, was carried out and counts. A
  reset or closed one, before the API, was not and does not. The budget
  shows it on the next answer.

  @writes
  Scenario: A truncated create as the first request of an account has created its campaign and spent its request
    Rules: FAULT-21, FAULT-27, FAULT-29, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "truncate"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Cut first", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be cut in the body without a whole answer
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the response status should be 200
    And the JSON at "data.items.0.name" should be "Cut first"
    And I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 2
    When I send a GET request to "/v1/testers"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 3

  @writes
  Scenario: A truncated create after other requests counts like any other
    Rules: FAULT-21, FAULT-27, FAULT-29, RATE-7.

    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "left"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "truncate"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Cut later", "platform": "web", "testersRequired": 2, "rewardPerBug": 3}'
    Then the connection should be cut in the body without a whole answer
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.name" should be "Cut later"
    And the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 2
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0.status" should equal 200
    And the JSON at "data.items.0.carriedOut" should equal true
    And the JSON at "data.items.0.received" should be "partial"

  @writes
  Scenario Outline: A create whose connection is <dropped> before the API spends nothing and creates nothing
    Rules: FAULT-19, FAULT-20, FAULT-26, FAULT-28, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "<network>"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Never made", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be <dropped> without an answer
    When I send a GET request to "/v1/campaigns?limit=100"
    Then no item at "data.items" should have "name" equal to "Never made"
    And I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 1
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0.status" should equal null
    And the JSON at "data.items.0.carriedOut" should equal false

    Examples:
      | network | dropped |
      | reset   | reset   |
      | close   | closed  |

  @writes
  Scenario Outline: A create whose answer is <dropped> after the API has created its campaign and spent its request
    Rules: FAULT-41, FAULT-43, JRNL-7, JRNL-19, JRNL-20, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "<network>", "phase": "after"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Made, answer lost", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be <dropped> without an answer
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.name" should be "Made, answer lost"
    And I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 2
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0.status" should equal 200
    And the JSON at "data.items.0.carriedOut" should equal true
    And the JSON at "data.items.0.received" should be "nothing"

    Examples:
      | network | dropped |
      | reset   | reset   |
      | close   | closed  |

  Scenario: A trickled answer the client waits for counts once
    Rules: FAULT-23, FAULT-27, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/testers", "network": "trickle", "trickleMs": 200}'
    And I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the response should be a success envelope
    And I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 1
    When I send a GET request to "/v1/testers"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 2

  Scenario: A trickled answer the client gave up on was carried out and counts
    Rules: FAULT-23, FAULT-27, JRNL-8, JRNL-20, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/testers", "network": "trickle", "trickleMs": 3000}'
    And I send a GET request to "/v1/testers" and give up after 300 ms
    Then within 5 seconds the GET request to "/_sandbox/requests" should answer with the JSON at "data.items.0.pending" equal to false
    And the JSON at "data.items.0.carriedOut" should equal true
    And the JSON at "data.items.0.abandoned" should equal true
    When I send a GET request to "/v1/testers"
    Then I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 2

  @writes
  Scenario: A delayed create the client waits out has created its campaign and counts once
    Rules: FAULT-18, FAULT-27, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "delayMs": 200}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Late", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 200
    And the response should have taken at least 200 ms
    And I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 1
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.name" should be "Late"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 2

  @writes
  Scenario: A create its client gave up on during a delay before the API was not carried out
    Rules: FAULT-42, JRNL-19, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "delayMs": 5000}'
    And I send a POST request to "/v1/campaigns" and give up after 300 ms
    Then within 5 seconds the GET request to "/_sandbox/requests?method=POST" should answer with the JSON at "data.items.0.pending" equal to false
    And the JSON at "data.items.0.carriedOut" should equal false
    When I send a GET request to "/v1/testers"
    Then I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 1

  Scenario: A request its client gave up on during a delay after the API was carried out and counts
    Rules: FAULT-41, FAULT-43, JRNL-19, RATE-7.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/testers", "delayMs": 5000, "phase": "after"}'
    And I send a GET request to "/v1/testers" and give up after 300 ms
    Then within 5 seconds the GET request to "/_sandbox/requests" should answer with the JSON at "data.items.0.pending" equal to false
    And the JSON at "data.items.0.carriedOut" should equal true
    And the JSON at "data.items.0.status" should equal 200
    When I send a GET request to "/v1/testers"
    Then I save the header "X-RateLimit-Limit" as "limit"
    And the header "X-RateLimit-Remaining" should be equal to the saved "limit" minus 2

  Scenario: A status fault and a malformed answer spend nothing and say so
    Rules: FAULT-22, FAULT-26.

    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "left"
    And I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 503}'
    And I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "network": "malformed"}'
    And I send a GET request to "/v1/testers"
    Then the response status should be 503
    And the header "X-RateLimit-Remaining" should be equal to the saved "left"
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "Content-Type" should contain "application/json"
    And the header "X-RateLimit-Remaining" should be equal to the saved "left"
    When I send a GET request to "/v1/testers"
    Then the response should be a success envelope
    And the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 1
