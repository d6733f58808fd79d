@sandbox @webhooks @delivery
Feature: Webhook deliveries, received by conform's own receiver
  A receiver that de-duplicates on Webhook-Id and verifies the signature
  must see each event once when it answers 2xx, and the same event again,
  with the same Webhook-Id, after it failed.

  @writes
  Scenario: A filed bug reaches its subscriber once, signed, and nothing else arrives
    Rules: DLV-1, DLV-2, DLV-3, DLV-7, DLV-8, CTL-4.

    Given a fresh sandbox account
    And I register a webhook for "bug.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hooked", "platform": "web", "testersRequired": 1, "rewardPerBug": 3}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Crash on start", "severity": "critical"}'
    And I save the JSON at "data.id" as "bugId"
    Then within 10 seconds the receiver should get a "bug.created" event
    And the delivery should be signed with the webhook's secret
    And the header "Webhook-Id" should contain "msg_"
    And the header "Webhook-Timestamp" should be an integer
    And the JSON at "type" should be "bug.created"
    And the JSON at "data.id" should equal the saved "bugId"
    And the JSON at "data.status" should be "new"
    And no further "bug.created" delivery should reach the receiver within 1 second
    And the receiver should have got exactly 1 "bug.created" delivery
    And the receiver should have got no "campaign.created" event

  @writes
  Scenario: A failed delivery is retried with the same Webhook-Id, and both attempts are recorded
    Rules: DLV-4, DLV-9, DLV-14, DLV-15, DLV-16.

    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 500 to the next 1 delivery
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Retried", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And I save the header "Webhook-Id" as "firstId"
    And within 10 seconds the receiver should get the same event again
    And the header "Webhook-Id" should be "{firstId}"
    And within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 2
    And the JSON at "data.items.0.statusCode" should be at least 200
    And the JSON at "data.items.0.statusCode" should be less than 300
    And the JSON at "data.items.0.error" should be ""
    And the JSON at "data.items.0.nextAttemptAt" should equal null
    And the JSON at "data.items.1" should match:
      """
      {"attempt": 1, "statusCode": 500, "error": "receiver answered 500", "eventType": "campaign.created", "nextAttemptAt": "<timestamp>"}
      """

  @writes
  Scenario: Two webhooks of one account each get the event once, with one Webhook-Id
    Rules: DLV-1, DLV-4, DLV-8, WH-7.

    Given a fresh sandbox account
    And I register 2 webhooks for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Twice", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And I save the header "Webhook-Id" as "firstId"
    And within 10 seconds the receiver should get the same event again
    And the header "Webhook-Id" should be "{firstId}"
    And no further "campaign.created" delivery should reach the receiver within 1 second
    And the receiver should have got exactly 2 "campaign.created" deliveries
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.1.attempt" equal to 1
    Then the JSON at "data.items" should have 2 items
    And I save the JSON at "data.items.0.eventId" as "eventId"
    And I save the JSON at "data.items.0.webhookId" as "webhookOne"
    And the JSON at "data.items.1.eventId" should equal the saved "eventId"
    And the JSON at "data.items.1.webhookId" should not equal the saved "webhookOne"

  @writes
  Scenario: A bug change arrives as bug.updated with the bug as it became
    Rules: DLV-1, EVT-1, EVT-2, BUG-8.

    Given a fresh sandbox account
    And I register a webhook for "bug.updated"
    And a bug with status "new"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "confirmed"}'
    Then the response status should be 200
    And within 10 seconds the receiver should get a "bug.updated" event
    And the JSON at "data.id" should equal the saved "bugId"
    And the JSON at "data.status" should be "confirmed"
    And the receiver should have got no "bug.created" event
    When I send a GET request to "/_sandbox/events?limit=1"
    Then the JSON at "data.items.0.type" should be "bug.updated"
    And the JSON at "data.items.0.data.status" should be "confirmed"
