@sandbox @examples
Feature: Every example of the step catalogue, run
  Each example of `conform steps` and docs/writing-features.md appears
  here as written, in a scenario that gives it something true to check;
  go test ./docs runs this file against a sandbox with a frozen clock
  (TestStepExamplesRunAgainstTheSandbox), so a wrong example fails.

  @writes
  Scenario: Creating and reading a campaign
    Given a fresh sandbox account
    And I set the request header "Accept-Language" to "en"
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Beta", "platform": "ios", "testersRequired": 5, "rewardPerBug": 19.99}
      """
    Then the response status should be 200
    And the response should be an envelope
    And the response should be a success envelope
    And the response should be JSON
    And the JSON at "error" should not exist
    And the JSON at "data.status" should be "draft"
    And the JSON at "data.status" should be one of "draft, active"
    And the JSON at "data.rewardPerBug" should equal 19.99
    And the JSON at "data.testersRequired" should be an integer
    And the JSON at "data.id" should start with "cmp_"
    And the JSON at "data.createdAt" should be a timestamp in UTC with milliseconds
    And every timestamp in the response should be in UTC with milliseconds
    And the header "WWW-Authenticate" should be absent
    And the JSON at "data" should match:
      """
      {"id": "<id>", "status": "draft", "createdAt": "<timestamp>"}
      """
    When I save the JSON at "data.id" as "campaignId"
    And I send a GET request to "/v1/campaigns/{campaignId}"
    Then the JSON at "data.id" should equal the saved "campaignId"
    When I save the "id" of a record at "data" as "campaignId"
    Then within 5 seconds the GET request to "/v1/campaigns/{campaignId}" should answer with the JSON at "data.status" equal to "draft"
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data.items" should contain:
      """
      {"id": "{campaignId}", "status": "draft"}
      """
    And the JSON at "data.items" should not contain:
      """
      {"name": "Lost"}
      """
    And the items at "data.items" should include one with "id" equal to "{campaignId}"
    And the answer should hold a record with id "{campaignId}"
    And the items at "data.items" should be ordered by "createdAt" descending
    And the JSON at "data.items" should have at least 3 items
    And the JSON at "data.items" should have at most 20 items
    And the JSON at "data.items" should not be empty

  @writes
  Scenario: An amount is answered as sent
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Exact", "platform": "web", "testersRequired": 1, "rewardPerBug": 7.50}'
    Then the response body should contain "7.50"

  Scenario: Lists, pages and filters
    Given a fresh sandbox account
    When I send 3 GET requests to "/v1/campaigns"
    Then each of the last 3 responses should have status 200
    When I send a GET request to "/v1/campaigns?limit=2"
    Then the JSON at "data.items" should have 2 items
    When I send a GET request to "/v1/bugs?status=new"
    Then every item at "data.items" should have "status" equal to "new"
    When I send a GET request to "/v1/campaigns?status=completed&platform=web"
    Then the JSON at "data.items" should be empty
    And walking "/v1/campaigns" with limit 2 should give every item once, newest first
    And filtering by "platform" = "ios" on "/v1/testers" should give exactly the matching items by "platforms"

  @writes
  Scenario: Another account's campaign is not in this account's list
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Mine", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    Given a fresh sandbox account
    Then walking "/v1/campaigns" with limit 2 should give every item once, newest first
    And no item at "items" should have "id" equal to "{campaignId}"
    When I send a GET request to "/v1/campaigns"
    And I save the JSON at "data.items.0.id" as "firstId"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Newer", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns"
    Then the JSON at "data.items.0.id" should not equal the saved "firstId"

  @writes
  Scenario: Bugs, their lifecycle and unknown ids
    Given a fresh sandbox account
    And a bug with status "new"
    When I send a GET request to "/v1/bugs?limit=100"
    Then the record with id "{bugId}" in the answer should have "resolution" equal to null
    And a bug with status "resolved"
    Then the JSON at "data.updatedAt" should be at least the JSON at "data.createdAt"
    When I send a GET request to "/v1/bugs/{bugId}"
    Then the response status should be 405
    And the header "Allow" should be present
    When I change the "status" of a record listed at "/v1/bugs" to a value its data shows, saving its id as "bugId" and the value as "newStatus"
    And I send a GET request to "/v1/bugs?limit=100"
    Then the record with id "{bugId}" in the answer should have "status" equal to "{newStatus}"
    When I save an unknown id of the form of "campaignId" as "unknownId"
    And I send a GET request to "/v1/campaigns/{unknownId}"
    Then the response status should be 404
    And the response should be an error envelope

  Scenario: Keys that are refused
    Given I am not authenticated
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 401
    And the error code should be "INVALID_API_KEY"
    And the header "WWW-Authenticate" should contain "Bearer"
    Given I use the Authorization header "bearer {key}"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    Given I use the API key "svc_test_expired{random}"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be one of "400, 401, 403"
    And the response should not be successful
    Given I save "a" repeated 15872 times as "bigBody"
    Given I save "svc_live_{random}" as "liveKey"
    And I use the API key "{liveKey}"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 401
    And the response body should not contain "{liveKey}"

  Scenario: Bodies and targets the API refuses
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": '
    Then the response status should be 400
    When I send a POST request to "/v1/campaigns" with a "text/plain" body:
      """
      name=Beta
      """
    Then the response status should be 415
    When I send a POST request to "/v1/campaigns" with a JSON body of 1100000 bytes
    Then the response status should be 413
    When I send a POST request to "/v1/campaigns" with the body '{"name": ""}'
    Then the JSON at "error.details" should exist
    When I send a GET request to "/v1/campaigns/cmp_" padded with "0" to a request target of 8193 bytes
    Then the response status should be 414

  Scenario: Rate-limit headers
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    Then the rate-limit headers should be present as integers
    And the header "X-RateLimit-Limit" should be "1000"
    And X-RateLimit-Remaining should not exceed X-RateLimit-Limit
    And X-RateLimit-Limit should not exceed the published limits
    And X-RateLimit-Reset should be a plausible reset time
    And X-RateLimit-Reset should be a Unix time in seconds within 60 seconds of the server's clock
    And X-RateLimit-Reset should be the end of the server's current UTC minute, hour or day
    And X-RateLimit-Reset should fall on a whole UTC minute
    When I save the header "X-RateLimit-Limit" as "limit"
    And I send a GET request to "/v1/campaigns"
    Then X-RateLimit-Remaining should have decreased since the previous response
    And X-RateLimit-Limit should be unchanged since the previous response

  @writes
  Scenario: A window spent, and one more write
    Given I save "svc_test_docs_burst_{random}" as "burstKey"
    And I use the API key "{burstKey}"
    When I send 21 POST requests to "/v1/campaigns" with the body '{"name": "Page", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send GET requests to "/v1/campaigns" until the rate limit is exceeded
    Then the response status should be 429
    And the header "Retry-After" should be an integer
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 429
    And X-RateLimit-Remaining should be unchanged since the previous response

  @writes
  Scenario: Planned faults, one line each
    Given a fresh sandbox account
    And I plan the fault:
      """
      {"method": "POST", "path": "/v1/campaigns", "status": 503, "count": 1}
      """
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Lost", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 503
    And the header "X-Sandbox-Fault" should be "{faultId}"
    And the journal should hold 1 "POST" request to "/v1/campaigns"
    When I send a GET request to "/v1/campaigns"
    Then the journal should hold 2 requests to "/v1/campaigns*"
    When I plan the fault:
      """
      {"method": "GET", "path": "/v1/testers", "delayMs": 1000}
      """
    And I send a GET request to "/v1/testers" and give up after 200 ms
    And I plan the fault:
      """
      {"method": "POST", "path": "/v1/campaigns", "delayMs": 1000, "phase": "after"}
      """
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Late", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}' and give up after 300 ms
    And I plan the fault:
      """
      {"method": "GET", "path": "/v1/testers", "delayMs": 20000, "count": 9}
      """
    And I send 9 GET requests to "/v1/testers" at once, each giving up after 4000 ms
    Then exactly 1 of the last 9 responses should have status 200
    And I plan the fault:
      """
      {"method": "GET", "path": "/v1/analytics", "delayMs": 200}
      """
    And I send a GET request to "/v1/analytics"
    Then the response should have taken at least 200 ms
    When I plan the fault:
      """
      {"method": "POST", "path": "/v1/campaigns", "network": "reset", "count": 2}
      """
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Dropped", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be dropped without an answer
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Reset", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be reset without an answer
    When I plan the fault:
      """
      {"status": 500, "count": 5}
      """
    And I clear the planned faults
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    When I reset the sandbox account
    Then the journal should hold 0 requests to "/v1/*"

  @writes @frozen-clock
  Scenario: Moving the clock
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/clock"
    And I save the JSON at "data.now" as "before"
    And I move the clock forward by "90s"
    Then the JSON at "data.now" should be equal to the saved "before" plus 90

  @writes @delivery
  Scenario: Webhook deliveries to conform's receiver
    Given a fresh sandbox account
    And I register a webhook for "campaign.created, bug.created"
    Then the JSON at "data.events" should contain "bug.created"
    And the JSON at "data.events" should not contain "bug.updated"
    And the receiver should have got no "campaign.created" event
    Given the receiver answers 500 to the next 1 delivery
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hooked", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 5 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    And the header "Webhook-Id" should match the pattern "^msg_[0-9a-f]{32}$"
    And I save the header "Webhook-Id" as "firstWebhookId"
    Then within 10 seconds the receiver should get the same event again
    And the sandbox's deliveries should settle within 5 seconds
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver holds its answers until released
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Twin", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 5 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should not be "{firstWebhookId}"
    When the receiver releases its held answers
    Then no further "campaign.created" delivery should reach the receiver within 2 seconds

  @writes @delivery
  Scenario: Webhook faults a receiver must refuse
    Given a fresh sandbox account
    And I register a webhook for "campaign.created, bug.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "webhook": "badSignature"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Forged", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery's signature should not verify with the webhook's secret
    And the receiver should have got exactly 1 "campaign.created" delivery
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "bug.created", "webhook": "staleTimestamp"}'
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Stale", "severity": "low"}'
    Then within 10 seconds the receiver should get a "bug.created" event
    And the delivery should be signed with the webhook's secret over a Webhook-Timestamp 600 seconds before the event

  @writes @delivery
  Scenario: A delivery whose connection the receiver cuts is sent again
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver drops the next 1 delivery without an answer
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Cut", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And within 10 seconds the receiver should get the same event again
    And the delivery should be signed with the webhook's secret

  @writes @delivery
  Scenario: conform's receiver registered for every event
    Given a fresh sandbox account
    When I register conform's receiver as a webhook
    Then the JSON at "data.id" should start with "whk_"

  @writes
  Scenario: The verdict on the client that used the key
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    Then the client should have held every client rule
    Given I plan the fault:
      """
      {"path": "/v1/campaigns", "status": 429, "retryAfter": 30}
      """
    When I send 2 GET requests to "/v1/campaigns"
    Then the client rule "CLI-4" should be broken

  Scenario: Answers to a script of another origin
    Given a fresh sandbox account
    And I set the request header "Origin" to "http://conform.invalid"
    When I send a GET request to "/v1/campaigns"
    Then the answers to the origin "http://conform.invalid" should let it in wholly or send no Access-Control header
