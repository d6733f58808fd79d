@reset @sandbox @stable
Feature: Resetting an account
  POST /_sandbox/reset replaces the caller's account with a freshly seeded
  one: records, IDs, events and delivery records, /v1 rate-limit counts, the
  clock, planned faults and the request journal all start over, and pending
  deliveries are cancelled. The controls' own budget carries on, and webhook
  secrets stay derivable.

  @writes @RESET-1 @RESET-2 @RESET-3 @ACCT-5
  Scenario: A reset gives back the seeded records and starts IDs over
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=100"
    And I save the JSON at "data.items.0.id" as "newestSeeded"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Gone soon", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/reset"
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data" should equal {"reset": true}
    When I send a GET request to "/v1/campaigns/{campaignId}"
    Then the response status should be 404
    And the error code should be "NOT_FOUND"
    When I send a GET request to "/v1/campaigns?limit=100"
    Then the JSON at "data.items.0.id" should equal the saved "newestSeeded"
    And no item at "data.items" should have "id" equal to "{campaignId}"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Again", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.id" should equal the saved "campaignId"

  @writes @RESET-4 @DLV-14
  Scenario: A reset starts the events and the delivery records over
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://169.254.169.254/reset", "events": ["*"]}'
    And a bug with status "confirmed"
    And within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.2.attempt" equal to 1
    And I send a GET request to "/_sandbox/events"
    Then the JSON at "data.items" should have 3 items
    When I send a POST request to "/_sandbox/reset"
    And I send a GET request to "/_sandbox/events"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should be empty
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Quiet", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/_sandbox/events"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should be "evt_000001"
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should be empty

  @writes @RESET-5 @CTL-2 @CTL-3
  Scenario: A reset starts the /v1 counts over, and the controls' budget carries on
    Given a fresh sandbox account
    When I send 3 GET requests to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "apiLeft"
    And I send a GET request to "/_sandbox/faults"
    And I save the header "X-RateLimit-Remaining" as "controlsLeft"
    And I send a POST request to "/_sandbox/reset"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "controlsLeft" minus 1
    When I send a GET request to "/v1/testers"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "apiLeft" plus 2

  @writes @delivery @RESET-7 @RESET-8 @FAULT-30
  Scenario: A reset clears every planned fault and the journal
    Given a fresh sandbox account
    When I send 2 GET requests to "/v1/campaigns"
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 500, "count": 5}'
    And I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 503}'
    And I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "webhook": "badSignature", "count": 3}'
    And I send a POST request to "/_sandbox/faults" with the body '{"event": "*", "delayMs": 30000}'
    And I send a POST request to "/_sandbox/reset"
    And I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.path" should be "/v1/testers"
    Given I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Unfaulted", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data.scheduled" should equal 0
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.fault" should equal null

  @frozen-clock @writes @RESET-2 @RESET-3 @RESET-6 @CLK-1 @ACCT-8
  Scenario: A reset starts the clock over at the frozen instant
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Then", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.createdAt" as "start"
    And I send a GET request to "/v1/campaigns?limit=100"
    And I save the JSON at "data.items" as "listed"
    And I send a POST request to "/_sandbox/clock" with the body '{"advance": "48h"}'
    And I send a POST request to "/_sandbox/reset"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Then", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns?limit=100"
    Then the JSON at "data.items" should equal the saved "listed"
    When I send a POST request to "/_sandbox/reset"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Now", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should equal the saved "start"

  @writes @RESET-9 @WH-8
  Scenario: A reset keeps webhook secrets derivable
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/derived", "events": ["bug.created"]}'
    And I save the JSON at "data.id" as "firstHook"
    And I save the JSON at "data.secret" as "firstSecret"
    And I send a POST request to "/_sandbox/reset"
    And I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/derived", "events": ["bug.created"]}'
    Then the JSON at "data.id" should equal the saved "firstHook"
    And the JSON at "data.secret" should equal the saved "firstSecret"

  @writes @delivery @DLV-24 @RESET-4
  Scenario: A reset cancels the pending retries
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 500 to the next 5 deliveries
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Cancelled", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.statusCode" equal to 500
    And I send a POST request to "/_sandbox/reset"
    Then no further "campaign.created" delivery should reach the receiver within 4 seconds
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should be empty
