@sandbox @journal
Feature: The request journal, as an SDK's QA engineer reads it
  What an SDK really sent, read back from GET /_sandbox/requests.

  @writes
  Scenario: The journal keeps what the client sent, newest first, with the key redacted
    Rules: JRNL-1, JRNL-3, JRNL-7, JRNL-10, JRNL-12.

    Given a fresh sandbox account
    And I set the request header "X-Client-Attempt" to "1"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Journalled", "platform": "web", "testersRequired": 3, "rewardPerBug": 7.50}'
    And I send a GET request to "/v1/testers?platform=ios&limit=2"
    And I send a GET request to "/_sandbox/requests"
    Then the response status should be 200
    And the JSON at "data.items" should have 2 items
    And the JSON at "data.items.0" should match:
      """
      {"method": "GET", "path": "/v1/testers", "query": "platform=ios&limit=2", "status": 200, "fault": null, "at": "<timestamp>"}
      """
    And the JSON at "data.items.1" should match:
      """
      {"method": "POST", "path": "/v1/campaigns", "status": 200, "bodyTruncated": false}
      """
    And the JSON at "data.items.1.body" should contain "7.50"
    And the JSON at "data.items.1.headers.X-Client-Attempt.0" should be "1"
    And the JSON at "data.items.1.headers.Authorization.0" should contain "svc_test_"
    And the response body should not contain "{key}"

  Scenario: The journal filters by method and by path pattern
    Rules: JRNL-13.

    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=new"
    And I send a GET request to "/v1/bugs?severity=high"
    And I send a GET request to "/v1/campaigns"
    And I send a PATCH request to "/v1/bugs/bug_nosuch" with the body '{"status": "confirmed"}'
    And I send a GET request to "/_sandbox/requests?method=GET&path=/v1/bugs"
    Then the JSON at "data.items" should have 2 items
    And every item at "data.items" should have "path" equal to "/v1/bugs"
    And the JSON at "data.items.0.query" should be "severity=high"
    When I send a GET request to "/_sandbox/requests?path=/v1/bugs*"
    Then the JSON at "data.items" should have 3 items
    And the JSON at "data.items.0.method" should be "PATCH"
    And the JSON at "data.items.0.status" should equal 404
    When I send a GET request to "/_sandbox/requests?method=DELETE"
    Then the JSON at "data.items" should be empty

  @writes
  Scenario: The journal names the fault that answered a request
    Rules: JRNL-7, JRNL-10, FAULT-25.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/analytics", "status": 503, "retryAfter": 2}'
    And I save the JSON at "data.id" as "faultId"
    And I send a GET request to "/v1/analytics"
    Then the response status should be 503
    And the header "Retry-After" should be "2"
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0.status" should equal 503
    And the JSON at "data.items.0.fault.id" should equal the saved "faultId"
    And the JSON at "data.items.0.fault.status" should equal 503

  Scenario: Controls are not journalled
    Rules: JRNL-1.

    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/events"
    And I send a GET request to "/_sandbox/faults"
    And I send a GET request to "/_sandbox/deliveries"
    And I send a GET request to "/_sandbox/requests"
    Then the response status should be 200
    And the JSON at "data.items" should be empty

  @writes
  Scenario: A reset empties the journal and the plan of faults
    Rules: RESET-1, RESET-7, RESET-8.

    Given a fresh sandbox account
    When I send 3 GET requests to "/v1/campaigns"
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 500, "count": 5}'
    And I send a POST request to "/_sandbox/reset"
    Then the response status should be 200
    And the JSON at "data.reset" should equal true
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200

  Scenario: A journal filter it cannot use is refused
    Rules: JRNL-14.

    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/requests?method=FETCH"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"
    When I send a GET request to "/_sandbox/requests?path=/campaigns"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

  Scenario: A key in a query is redacted in the journal too
    Rules: JRNL-12, AUTH-6.

    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?note={key}"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0.query" should contain "note="
    And the response body should not contain "{key}"
