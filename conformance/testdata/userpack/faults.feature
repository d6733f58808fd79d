@sandbox @faults
Feature: Planned faults, as an SDK's QA engineer uses them
  Written from docs/contract.md with the documented step catalogue only.
  Each scenario names the rules it exercises.

  @writes
  Scenario: A fault for one method and path hits only that route
    Rules: FAULT-6, FAULT-7, FAULT-10, FAULT-13, FAULT-14, FAULT-25, FAULT-31.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "status": 503, "count": 1}'
    Then the response status should be 200
    And the JSON at "data.id" should start with "flt_"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hit", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 503
    And the response should be an error envelope
    And the error code should be "INJECTED_FAILURE"
    And the JSON at "error.status" should equal 503
    And the header "Retry-After" should be "1"
    And the header "X-Sandbox-Fault" should contain "flt_"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Through", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty

  @writes
  Scenario: A path pattern with a final star hits every path under it, queries included
    Rules: FAULT-7, FAULT-10.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/bugs*", "status": 502, "count": 2}'
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    When I send a GET request to "/v1/bugs?status=new"
    Then the response status should be 502
    And the error code should be "INJECTED_FAILURE"
    When I send a GET request to "/v1/bugs/bug_nosuch"
    Then the response status should be 502
    When I send a GET request to "/v1/bugs"
    Then the response status should be 200

  @writes
  Scenario: An injected 429 says when to retry and spends none of the budget
    Rules: FAULT-14, FAULT-26, RATE-7.

    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "before"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/testers", "status": 429, "retryAfter": 7}'
    And I send a GET request to "/v1/testers"
    Then the response status should be 429
    And the error code should be "RATE_LIMIT_EXCEEDED"
    And the header "Retry-After" should be "7"
    And the header "X-RateLimit-Remaining" should be equal to the saved "before"
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-RateLimit-Remaining" should be equal to the saved "before" minus 1

  @writes
  Scenario: The plan lists what is left and what fired, and clearing empties it
    Rules: FAULT-1, FAULT-30, FAULT-32.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 500, "count": 3}'
    And I save the JSON at "data.id" as "faultId"
    Then the JSON at "data.count" should equal 3
    And the JSON at "data.fired" should equal 0
    When I send a GET request to "/v1/testers"
    Then the response status should be 500
    And the error code should be "INTERNAL_ERROR"
    And the header "X-Sandbox-Fault" should be "{faultId}"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should equal the saved "faultId"
    And the JSON at "data.items.0.count" should equal 2
    And the JSON at "data.items.0.fired" should equal 1
    When I send a DELETE request to "/_sandbox/faults"
    Then the response status should be 200
    And the JSON at "data.cleared" should equal 1
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty

  @writes
  Scenario: The oldest matching fault hits first
    Rules: FAULT-9.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 502}'
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 504}'
    And I send a GET request to "/v1/testers"
    Then the response status should be 502
    When I send a GET request to "/v1/testers"
    Then the response status should be 504
    When I send a GET request to "/v1/testers"
    Then the response status should be 200

  @writes
  Scenario: A seeded rate hits as many requests on every fresh account, and stays until cleared
    Rules: FAULT-11, FAULT-12, FAULT-30.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "rate": 0.5, "seed": 42, "status": 500}'
    And I send 12 GET requests to "/v1/testers"
    And I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items.0.count" should equal null
    And the JSON at "data.items.0.fired" should be greater than 0
    And the JSON at "data.items.0.fired" should be less than 12
    And I save the JSON at "data.items.0.fired" as "firedFirst"
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "rate": 0.5, "seed": 42, "status": 500}'
    And I send 12 GET requests to "/v1/testers"
    And I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items.0.fired" should be equal to the saved "firedFirst"

  @writes
  Scenario: A write answered by a status fault leaves the account untouched
    Rules: FAULT-26, FAULT-28, EVT-3.

    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    And I save the JSON at "data.items.0.id" as "newestBefore"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "status": 500}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Lost", "platform": "web", "testersRequired": 2, "rewardPerBug": 5}'
    Then the response status should be 500
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data.items.0.id" should equal the saved "newestBefore"
    And no item at "data.items" should have "name" equal to "Lost"
    When I send a GET request to "/_sandbox/events"
    Then no item at "data.items" should have "type" equal to "campaign.created"

  @writes
  Scenario: A delayed write reaches the API and counts
    Rules: FAULT-18, FAULT-25, FAULT-27.

    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "before"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "delayMs": 200}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Slow", "platform": "android", "testersRequired": 4, "rewardPerBug": 2.5}'
    Then the response status should be 200
    And the response should have taken at least 200 ms
    And the header "X-Sandbox-Fault" should contain "flt_"
    And the header "X-RateLimit-Remaining" should be equal to the saved "before" minus 1
    And I save the JSON at "data.id" as "campaignId"
    When I send a GET request to "/v1/campaigns/{campaignId}"
    Then the response status should be 200
    And the JSON at "data.name" should be "Slow"

  Scenario: Faults never touch the controls
    Rules: FAULT-4, FAULT-5.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"status": 500, "count": 1}'
    And I send a GET request to "/_sandbox/events"
    Then the response status should be 200
    When I send a GET request to "/_sandbox/faults"
    Then the response status should be 200
    And the JSON at "data.items.0.count" should equal 1
    And the JSON at "data.items.0.fired" should equal 0
    When I send a GET request to "/v1/analytics"
    Then the response status should be 500

  Scenario: A misspelt or idle fault is refused and nothing is planned
    Rules: FAULT-3, FAULT-8, FAULT-12, FAULT-24.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"stauts": 500}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the JSON at "error.details" should not be empty
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/campaigns"}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/campaigns", "status": 500}'
    Then the error code should be "VALIDATION_ERROR"
    When I send a POST request to "/_sandbox/faults" with the body '{"seed": 3, "status": 500}'
    Then the error code should be "VALIDATION_ERROR"
    When I send a POST request to "/_sandbox/faults" with the body '{"network": "reset", "status": 500}'
    Then the error code should be "VALIDATION_ERROR"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/v1/testers"
    Then the response status should be 200

  @writes
  Scenario: A malformed answer is a 200 that is not JSON
    Rules: FAULT-22, FAULT-25, FAULT-28.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/campaigns", "network": "malformed"}'
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should contain "flt_"
    And the header "Content-Type" should contain "application/json"
    When I send a GET request to "/v1/campaigns"
    Then the response should be a success envelope

  @writes
  Scenario: A dropped connection leaves the account as it was, and the journal says so
    Rules: FAULT-19, FAULT-28, JRNL-9, JRNL-10.

    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    And I save the JSON at "data.items.0.id" as "newestBefore"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "reset"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Dropped", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be dropped without an answer
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0.status" should equal null
    And the JSON at "data.items.0.fault.network" should be "reset"
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data.items.0.id" should equal the saved "newestBefore"
