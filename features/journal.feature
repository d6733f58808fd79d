@journal @sandbox @stable
Feature: The request journal
  GET /_sandbox/requests lists the account's /v1 requests, newest first, as
  the client sent them (every key redacted to its hint) and as they were
  answered: status, the planned fault that hit them, when, and how long the
  answer took. Control requests are not in it, and a reset empties it.

  @writes @JRNL-1 @JRNL-3 @JRNL-7 @JRNL-10 @JRNL-11
  Scenario: An entry holds the request as sent and its answer
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Journalled", "platform": "web", "testersRequired": 3, "rewardPerBug": 7.50}'
    And I save the JSON at "data.createdAt" as "createdAt"
    And I send a GET request to "/v1/testers?platform=ios&limit=2"
    And I send a PATCH request to "/v1/bugs/bug_999999" with the body '{"status": "confirmed"}'
    And I send a GET request to "/_sandbox/events"
    And I send a GET request to "/_sandbox/requests"
    Then the response status should be 200
    And the JSON at "data.items" should have 3 items
    And the JSON at "data.items.0" should match:
      """
      {"method": "PATCH", "path": "/v1/bugs/bug_999999", "query": "", "body": "{\"status\": \"confirmed\"}", "bodyBytes": 23, "bodyTruncated": false, "status": 404, "fault": null, "abandoned": false, "at": "<timestamp>", "durationMs": "<integer>"}
      """
    And the JSON at "data.items.1" should match:
      """
      {"method": "GET", "path": "/v1/testers", "query": "platform=ios&limit=2", "truncated": false, "body": "", "bodyBytes": 0, "status": 200, "fault": null}
      """
    And the JSON at "data.items.2" should match:
      """
      {"method": "POST", "path": "/v1/campaigns", "status": 200, "bodyBytes": 85, "bodyTruncated": false, "headersTruncated": false}
      """
    And the JSON at "data.items.2.body" should contain "7.50"
    And the JSON at "data.items.2.headers.Accept.0" should be "application/json"
    And the JSON at "data.items.2.headers.Content-Type.0" should be "application/json"
    And the JSON at "data.items.2.durationMs" should be at least 0
    And the JSON at "data.items.2.at" should be a timestamp in UTC with milliseconds

  @frozen-clock @writes @JRNL-11 @CLK-7
  Scenario: An entry is stamped on the account's clock
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "3h"}'
    And I save the JSON at "data.now" as "now"
    And I send a GET request to "/v1/analytics"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0.at" should equal the saved "now"

  @JRNL-7 @JRNL-10 @JRNL-11 @FAULT-18 @FAULT-25
  Scenario: An entry names the fault that answered, and the time a delay took
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 502}'
    And I save the JSON at "data.id" as "statusFault"
    And I send a GET request to "/v1/analytics"
    Then the response status should be 502
    And the header "X-Sandbox-Fault" should be "{statusFault}"
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "delayMs": 150}'
    And I save the JSON at "data.id" as "delayFault"
    And I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be "{delayFault}"
    When I send a GET request to "/v1/campaigns"
    Then the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 4 items
    And the JSON at "data.items.0.fault" should equal null
    And the JSON at "data.items.0.status" should equal 200
    And the JSON at "data.items.1.status" should equal 200
    And the JSON at "data.items.1.fault.id" should equal the saved "delayFault"
    And the JSON at "data.items.1.durationMs" should be at least 150
    And the JSON at "data.items.2.status" should equal 502
    And the JSON at "data.items.2.fault.id" should equal the saved "statusFault"
    And the JSON at "data.items.2.fault.status" should equal 502

  @JRNL-12 @AUTH-6 @SHR-12
  Scenario: Every key in an entry appears only as its hint
    Given a fresh sandbox account
    And I set the request header "User-Agent" to "sdk-test {key}"
    When I send a GET request to "/v1/campaigns/{key}"
    And I send a GET request to "/v1/testers?limit={key}"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "{key}", "platform": "ios", "testersRequired": 0, "rewardPerBug": 1}'
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 3 items
    And the response body should not contain "{key}"
    And the JSON at "data.items.2.path" should start with "/v1/campaigns/svc_test_"
    And the JSON at "data.items.2.path" should contain "…"
    And the JSON at "data.items.1.query" should start with "limit=svc_test_"
    And the JSON at "data.items.0.body" should contain "svc_test_"
    And the JSON at "data.items.0.headers.Authorization.0" should contain "svc_test_"
    And the JSON at "data.items.0.headers.User-Agent.0" should start with "sdk-test svc_test_"

  @JRNL-12 @AUTH-6 @SHR-12
  Scenario: A key in a header's name or beside another key appears only as its hint
    Given a fresh sandbox account
    And I set the request header "X-Echo-{key}" to "1"
    And I set the request header "X-Pair" to "{key},{key}"
    When I send a GET request to "/v1/campaigns?limit=1"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 1 item
    And the response body should not contain "{key}"
    And the JSON at "data.items.0.headers.X-Pair.0" should contain ","

  @JRNL-13
  Scenario: The journal filters by method and by path pattern
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=new"
    And I send a GET request to "/v1/bugs?severity=high"
    And I send a GET request to "/v1/campaigns"
    And I send a PATCH request to "/v1/bugs/bug_999999" with the body '{"status": "confirmed"}'
    And I send a GET request to "/_sandbox/requests?method=GET&path=/v1/bugs"
    Then the JSON at "data.items" should have 2 items
    And every item at "data.items" should have "path" equal to "/v1/bugs"
    And the JSON at "data.items.0.query" should be "severity=high"
    And the JSON at "data.items.1.query" should be "status=new"
    When I send a GET request to "/_sandbox/requests?path=/v1/bugs*"
    Then the JSON at "data.items" should have 3 items
    And the JSON at "data.items.0.method" should be "PATCH"
    When I send a GET request to "/_sandbox/requests?method=PATCH"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.path" should be "/v1/bugs/bug_999999"
    When I send a GET request to "/_sandbox/requests?method=DELETE"
    Then the JSON at "data.items" should be empty

  @JRNL-14
  Scenario Outline: A journal filter it cannot use is refused: <query>
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/requests?<query>"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query             |
      | method=FETCH      |
      | method=get        |
      | path=/campaigns   |
      | path=/v1/*/bugs   |
      | path=/v1/bugs?x=1 |

  @JRNL-6
  Scenario: A long path or query is cut, and said to be
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?platform=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    And I send a GET request to "/v1/testers?platform=web"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0.truncated" should equal false
    And the JSON at "data.items.1.truncated" should equal true
    And the JSON at "data.items.1.query" should match the pattern "^platform=a{247}$"

  @JRNL-4
  Scenario: A long header value is cut, and said to be
    Given a fresh sandbox account
    And I set the request header "User-Agent" to "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    When I send a GET request to "/v1/testers"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0.headersTruncated" should equal true
    And the JSON at "data.items.0.headers.User-Agent.0" should match the pattern "^b{256}$"

  @writes @JRNL-5
  Scenario: A long body is kept in part, and its size in whole
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with a JSON body of 5000 bytes
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0.bodyBytes" should equal 5000
    And the JSON at "data.items.0.bodyTruncated" should equal true
    And the JSON at "data.items.0.body" should match the pattern "^\{"name": "a{1000}a{1000}a{38}$"

  @JRNL-2
  Scenario: The journal keeps the last 100 requests
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=1"
    And I send 100 GET requests to "/v1/testers"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 100 items
    And every item at "data.items" should have "path" equal to "/v1/testers"

  @direct @writes @JRNL-15 @JRNL-9 @JRNL-16 @FAULT-20
  Scenario: A dropped request is complete in the journal when its client sees the drop, listed before the retry
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "close"}'
    And I save the JSON at "data.id" as "fault"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Retried", "platform": "android", "testersRequired": 1, "rewardPerBug": 2}'
    Then the connection should be closed without an answer
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0" should match:
      """
      {"method": "POST", "status": null, "pending": false, "fault": {"id": "{fault}"}, "body": "{\"name\": \"Retried\", \"platform\": \"android\", \"testersRequired\": 1, \"rewardPerBug\": 2}"}
      """
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Retried", "platform": "android", "testersRequired": 1, "rewardPerBug": 2}'
    Then the response status should be 200
    When I send a GET request to "/v1/testers?limit=1"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 3 items
    And the JSON at "data.items" should match:
      """
      [{"method": "GET", "path": "/v1/testers", "status": 200, "fault": null}, {"method": "POST", "status": 200, "fault": null}, {"method": "POST", "status": null, "fault": {"id": "{fault}"}}]
      """

  @direct @faults @JRNL-8 @JRNL-7 @FAULT-18
  Scenario: A request its client gave up on is complete in the journal, abandoned and with no status
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/testers", "delayMs": 5000}'
    And I save the JSON at "data.id" as "fault"
    And I send a GET request to "/v1/testers" and give up after 300 ms
    Then within 5 seconds the GET request to "/_sandbox/requests" should answer with the JSON at "data.items.0.pending" equal to false
    And the JSON at "data.items.0" should match:
      """
      {"method": "GET", "path": "/v1/testers", "status": null, "pending": false, "abandoned": true, "fault": {"id": "{fault}"}}
      """

  @JRNL-16 @JRNL-10 @FAULT-13
  Scenario: An entry keeps the body of a request a status fault answered
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "PATCH", "path": "/v1/bugs*", "status": 503}'
    And I send a PATCH request to "/v1/bugs/bug_999999" with the body '{"status": "confirmed"}'
    Then the response status should be 503
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0" should match:
      """
      {"method": "PATCH", "path": "/v1/bugs/bug_999999", "body": "{\"status\": \"confirmed\"}", "bodyBytes": 23, "bodyTruncated": false, "status": 503, "fault": {"status": 503}}
      """

  @JRNL-17 @LIST-1
  Scenario: The journal is paged like a list
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?limit=1"
    And I send a GET request to "/v1/campaigns?limit=1"
    And I send a GET request to "/v1/bugs?limit=1"
    And I send a GET request to "/v1/analytics"
    And I send a GET request to "/v1/webhooks"
    And I send a GET request to "/_sandbox/requests?limit=2"
    Then the JSON at "data.items" should have 2 items
    And the JSON at "data.hasMore" should equal true
    And the JSON at "data.items.0.path" should be "/v1/webhooks"
    And the JSON at "data.items.1.path" should be "/v1/analytics"
    And I save the JSON at "data.nextCursor" as "cursor"
    When I send a GET request to "/v1/testers?limit=2"
    And I send a GET request to "/_sandbox/requests?limit=2&cursor={cursor}"
    Then the JSON at "data.items" should have 2 items
    And the JSON at "data.hasMore" should equal true
    And the JSON at "data.items.0.path" should be "/v1/bugs"
    And the JSON at "data.items.1.path" should be "/v1/campaigns"
    And I save the JSON at "data.nextCursor" as "cursor"
    When I send a GET request to "/_sandbox/requests?limit=2&cursor={cursor}"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.query" should be "limit=1"
    And the JSON at "data.items.0.path" should be "/v1/testers"
    And the JSON at "data.hasMore" should equal false
    And the JSON at "data.nextCursor" should equal null
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 6 items
    And the JSON at "data.hasMore" should equal false

  @JRNL-17 @JRNL-18
  Scenario Outline: A journal query with <query> is refused
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/requests?<query>"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query          |
      | limit=0        |
      | limit=101      |
      | limit=ten      |
      | cursor=nothing |
      | count=yes      |

  @JRNL-18 @JRNL-13
  Scenario: The journal counts the requests matching its filters
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=new"
    And I send a GET request to "/v1/bugs"
    And I send a PATCH request to "/v1/bugs/bug_999999" with the body '{"status": "confirmed"}'
    And I send a GET request to "/v1/campaigns"
    And I send a GET request to "/_sandbox/requests?count=true"
    Then the JSON at "data" should equal {"count": 4}
    When I send a GET request to "/_sandbox/requests?method=GET&count=true"
    Then the JSON at "data" should equal {"count": 3}
    When I send a GET request to "/_sandbox/requests?path=/v1/bugs*&count=true"
    Then the JSON at "data" should equal {"count": 3}
    When I send a GET request to "/_sandbox/requests?method=GET&path=/v1/bugs&count=true"
    Then the JSON at "data" should equal {"count": 2}
    When I send a GET request to "/_sandbox/requests?method=DELETE&count=true"
    Then the JSON at "data" should equal {"count": 0}
    When I send a GET request to "/_sandbox/requests?count=false&limit=1"
    Then the JSON at "data.items" should have 1 item
