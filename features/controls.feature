@controls @sandbox @stable
Feature: The sandbox's controls
  The controls under /_sandbox/ take the same test key as /v1 and act on
  that key's account only, within a per-key budget of their own.
  POST /_sandbox/bugs files a bug as a tester would, which the API itself
  cannot do.

  @CTL-1 @ACCT-2 @FAULT-4
  Scenario: A control acts on the caller's account only
    Given I save "svc_test_conform_ctl_a_{random}" as "keyA"
    And I save "svc_test_conform_ctl_b_{random}" as "keyB"
    And I use the API key "{keyA}"
    When I send a POST request to "/_sandbox/faults" with the body '{"status": 503, "count": 3}'
    Then the response status should be 200
    Given I use the API key "{keyB}"
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 1 item
    Given I use the API key "{keyA}"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 1 item
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should be empty

  @CTL-1 @AUTH-15
  Scenario Outline: <method> <path> needs a valid key
    Given I am not authenticated
    When I send a <method> request to "<path>"
    Then the response status should be 401
    And the error code should be "INVALID_API_KEY"

    Examples:
      | method | path                |
      | GET    | /_sandbox/events    |
      | GET    | /_sandbox/requests  |
      | POST   | /_sandbox/reset     |
      | POST   | /_sandbox/clock     |
      | DELETE | /_sandbox/faults    |

  @CTL-2 @CTL-3 @RATE-14
  Scenario: The controls carry their own budget's headers
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "apiLeft"
    And I send a GET request to "/_sandbox/events"
    Then the rate-limit headers should be present as integers
    And X-RateLimit-Remaining should not exceed X-RateLimit-Limit
    And I save the header "X-RateLimit-Remaining" as "controlsLeft"
    When I send a GET request to "/_sandbox/faults"
    And I send a GET request to "/_sandbox/requests"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "controlsLeft" minus 2
    When I send a GET request to "/v1/testers"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "apiLeft" minus 1
    When I send 3 GET requests to "/v1/campaigns"
    And I send a GET request to "/_sandbox/deliveries"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "controlsLeft" minus 3

  @writes @WEB-1
  Scenario: A script of another origin is let in wholly, or no Access-Control header is sent
    A run cannot see -cors-origins, but the answers show it: an answer that
    lets the origin in says it is listed, and then every answer to it,
    errors and faults included, exposes the headers scripts read, and its
    preflights are answered as such (WEB-2, WEB-3); otherwise no answer
    carries any Access-Control-* header (WEB-1).

    Given a fresh sandbox account
    And I set the request header "Origin" to "http://conform.invalid"
    When I send a GET request to "/v1/campaigns"
    And I send a GET request to "/v1/campaigns/cmp_conform_no_such"
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 503, "count": 1}'
    And I send a GET request to "/v1/testers"
    Then the response status should be 503
    Given I am not authenticated
    And I set the request header "Access-Control-Request-Method" to "POST"
    And I set the request header "Access-Control-Request-Headers" to "authorization, content-type, x-conform-trace"
    When I send a OPTIONS request to "/v1/campaigns"
    And I send a OPTIONS request to "/_sandbox/faults"
    Then the answers to the origin "http://conform.invalid" should let it in wholly or send no Access-Control header

  @writes @CTL-4 @EVT-1 @BUG-4
  Scenario: A filed bug is new, unresolved and announced
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?limit=1"
    And I save the JSON at "data.items.0.id" as "testerId"
    And I save the JSON at "data.items.0.platforms.0" as "platform"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Filed on", "platform": "{platform}", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "testerId": "{testerId}", "title": "Crash on save", "description": "Tap save twice.", "severity": "critical"}'
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {"id": "<id>", "campaignId": "{campaignId}", "testerId": "{testerId}", "title": "Crash on save", "description": "Tap save twice.", "severity": "critical", "status": "new", "resolution": null, "createdAt": "<timestamp>", "updatedAt": "<timestamp>"}
      """
    And the JSON at "data.id" should start with "bug_"
    And the JSON at "data.updatedAt" should be equal to the JSON at "data.createdAt"
    And I save the JSON at "data.id" as "bugId"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should equal the saved "bugId"
    When I send a GET request to "/_sandbox/events?limit=1"
    Then the JSON at "data.items.0.type" should be "bug.created"
    And the JSON at "data.items.0.data.id" should equal the saved "bugId"

  @writes @seed @CTL-5 @ACCT-3
  Scenario: Without a tester named, the oldest tester on the campaign's platform files the bug
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?platform=web&limit=100"
    Then the JSON at "data.items" should have 3 items
    And I save the JSON at "data.items.2.id" as "oldestWeb"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Web only", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Footer overlaps", "severity": "low"}'
    Then the response status should be 200
    And the JSON at "data.testerId" should equal the saved "oldestWeb"

  @writes @CTL-6 @CTL-7 @ERR-6
  Scenario Outline: Filing a bug with <case> is refused, naming <field>
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Refusals", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/bugs" with the body '<body>'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "<field>"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    Then the JSON at "data.items" should be empty

    Examples:
      | case                  | field      | body                                                                                          |
      | an unknown campaign   | campaignId | {"campaignId": "cmp_999999", "title": "T", "severity": "low"}                                  |
      | an unknown tester     | testerId   | {"campaignId": "{campaignId}", "testerId": "tst_999999", "title": "T", "severity": "low"}      |
      | no title              | title      | {"campaignId": "{campaignId}", "severity": "low"}                                              |
      | an empty title        | title      | {"campaignId": "{campaignId}", "title": "", "severity": "low"}                                 |
      | a title of 201 chars  | title      | {"campaignId": "{campaignId}", "title": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "severity": "low"} |
      | an unknown severity   | severity   | {"campaignId": "{campaignId}", "title": "T", "severity": "blocker"}                            |

  @writes @CTL-7
  Scenario: A title of 200 characters is accepted
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Long titles", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "severity": "medium"}'
    Then the response status should be 200
    And the JSON at "data.status" should be "new"

  @CLK-10
  Scenario: A settle waits at most 30000 ms, and names a timeoutMs it cannot take rather than clamp it
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 30000}'
    Then the response status should be 200
    And the JSON at "data.settled" should equal true
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 1}'
    Then the response status should be 200
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 30001}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "timeoutMs"
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 0}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "timeoutMs"
