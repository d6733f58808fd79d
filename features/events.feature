@events @sandbox @stable
Feature: Events and delivery records
  The sandbox's controls show what its webhooks are sent: GET /_sandbox/events
  lists the events the account's writes emitted, and GET /_sandbox/deliveries
  every attempt to deliver one, with its answer and when the next is due.
  Scenarios tagged @delivery register conform's own receiver ({webhookURL}).

  @writes @EVT-1 @EVT-2 @EVT-4 @ENV-11
  Scenario: Each write emits one event of its kind, newest first, carrying the record as answered
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/events"
    Then the response status should be 200
    And the JSON at "data.items" should be empty
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Evented", "platform": "web", "testersRequired": 2, "rewardPerBug": 7.50}'
    And I save the JSON at "data" as "campaign"
    And I save the JSON at "data.id" as "campaignId"
    And I save the JSON at "data.createdAt" as "campaignCreatedAt"
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Logo clipped", "severity": "low"}'
    And I save the JSON at "data" as "filed"
    And I save the JSON at "data.id" as "bugId"
    And I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "confirmed"}'
    And I save the JSON at "data" as "changed"
    And I send a GET request to "/_sandbox/events"
    Then the response status should be 200
    And the JSON at "data.items" should have 3 items
    And the JSON at "data.hasMore" should equal false
    And the JSON at "data.items.0" should match:
      """
      {"id": "<id>", "type": "bug.updated", "createdAt": "<timestamp>", "data": {"id": "{bugId}", "status": "confirmed"}}
      """
    And the JSON at "data.items.0.data" should equal the saved "changed"
    And the JSON at "data.items.1.type" should be "bug.created"
    And the JSON at "data.items.1.data" should equal the saved "filed"
    And the JSON at "data.items.2.type" should be "campaign.created"
    And the JSON at "data.items.2.data" should equal the saved "campaign"
    And the JSON at "data.items.2.id" should start with "evt_"
    And the JSON at "data.items.2.createdAt" should equal the saved "campaignCreatedAt"
    And the items at "data.items" should be ordered by "createdAt" descending
    And every timestamp in the response should be in UTC with milliseconds

  @writes @EVT-3 @BUG-18
  Scenario: A refused write emits no event
    Given a fresh sandbox account
    And a bug with status "new"
    When I send a GET request to "/_sandbox/events"
    And I save the JSON at "data.items" as "before"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 400
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "resolved"}'
    Then the response status should be 409
    When I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "", "severity": "low"}'
    Then the response status should be 400
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "new"}'
    Then the response status should be 200
    When I send a GET request to "/_sandbox/events"
    Then the JSON at "data.items" should equal the saved "before"

  @writes @EVT-4 @LIST-1 @LIST-7 @LIST-8
  Scenario: Events are walked page by page without loss or repeat
    Given a fresh sandbox account
    And a bug with status "resolved"
    When I send a GET request to "/_sandbox/events?limit=2"
    Then the JSON at "data.items" should have 2 items
    And the JSON at "data.hasMore" should equal true
    And the JSON at "data.nextCursor" should be a string
    And walking "/_sandbox/events" with limit 1 should give every item once, newest first
    And the JSON at "items" should have 4 items

  @EVT-4 @LIST-5
  Scenario Outline: The events list refuses a limit of <limit>
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/events?limit=<limit>"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | limit |
      | 0     |
      | 101   |
      | ten   |

  @writes @delivery @DLV-1 @DLV-2 @DLV-3 @DLV-8 @DLV-14 @DLV-15
  Scenario: A delivery is the event as listed, and a 2xx ends it after one attempt
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Once", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should match the pattern "^msg_[0-9a-f]{32}$"
    And I save the JSON at "" as "delivered"
    And I save the JSON at "id" as "eventId"
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0, "scheduled": 0}
      """
    And the receiver should have got exactly 1 "campaign.created" delivery
    When I send a GET request to "/_sandbox/events"
    Then the JSON at "data.items.0" should equal the saved "delivered"
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 1
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0" should match:
      """
      {"id": "<id>", "webhookId": "{webhookId}", "eventId": "<id>", "eventType": "campaign.created", "url": "{webhookURL}", "attempt": 1, "at": "<timestamp>", "statusCode": "<integer>", "error": "", "nextAttemptAt": null}
      """
    And the JSON at "data.items.0.statusCode" should be at least 200
    And the JSON at "data.items.0.statusCode" should be less than 300
    And the JSON at "data.items.0.id" should start with "dlv_"
    And the JSON at "data.items.0.eventId" should equal the saved "eventId"

  @writes @delivery @DLV-9 @DLV-11 @DLV-14 @DLV-15 @DLV-16
  Scenario: A failed attempt is recorded with the receiver's status and when the next is due
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 503 to the next 1 delivery
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Later", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And within 10 seconds the receiver should get the same event again
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 2
    Then the JSON at "data.items" should have 2 items
    And the JSON at "data.items.1" should match:
      """
      {"attempt": 1, "statusCode": 503, "error": "receiver answered 503", "eventType": "campaign.created", "url": "{webhookURL}", "nextAttemptAt": "<timestamp>"}
      """
    And the JSON at "data.items.1.nextAttemptAt" should be equal to the JSON at "data.items.1.at" plus 1
    And the JSON at "data.items.0" should match:
      """
      {"attempt": 2, "error": "", "nextAttemptAt": null}
      """
    And the JSON at "data.items.0.statusCode" should be at least 200
    And the JSON at "data.items.0.statusCode" should be less than 300
    And I save the JSON at "data.items.1.eventId" as "eventId"
    And the JSON at "data.items.0.eventId" should equal the saved "eventId"

  @writes @delivery @DLV-9 @DLV-11 @DLV-15
  Scenario: Each retry waits twice as long as the one before
    Given a fresh sandbox account
    And I register a webhook for "bug.created"
    And the receiver answers 500 to the next 2 deliveries
    And a bug with status "new"
    Then within 10 seconds the receiver should get a "bug.created" event
    And within 10 seconds the receiver should get the same event again
    And within 10 seconds the receiver should get the same event again
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 3
    Then the JSON at "data.items.2.nextAttemptAt" should be equal to the JSON at "data.items.2.at" plus 1
    And the JSON at "data.items.1.nextAttemptAt" should be equal to the JSON at "data.items.1.at" plus 2
    And the JSON at "data.items.0.nextAttemptAt" should equal null
    And the JSON at "data.items.0.statusCode" should be at least 200
    And the JSON at "data.items.0.error" should be ""

  @writes @delivery @DLV-9 @DLV-14 @DLV-15 @DLV-16
  Scenario: A delivery whose connection is cut is retried with the same Webhook-Id and body
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver drops the next 1 delivery without an answer
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Cut", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And within 10 seconds the receiver should get the same event again
    And the delivery should be signed with the webhook's secret
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 2
    Then the JSON at "data.items" should have 2 items
    And the JSON at "data.items.1" should match:
      """
      {"attempt": 1, "statusCode": 0, "eventType": "campaign.created", "url": "{webhookURL}", "nextAttemptAt": "<timestamp>"}
      """
    And the JSON at "data.items.1.error" should be one of "connection failed, timeout"
    And the JSON at "data.items.1.nextAttemptAt" should be equal to the JSON at "data.items.1.at" plus 1
    And the JSON at "data.items.0" should match:
      """
      {"attempt": 2, "error": "", "nextAttemptAt": null}
      """

  @writes @delivery @DLV-12 @DLV-8
  Scenario: An attempt has its time: an answer two seconds late still ends the delivery
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver holds its answers until released
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Slow", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And no further "campaign.created" delivery should reach the receiver within 2 seconds
    When the receiver releases its held answers
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data.settled" should equal true
    And the receiver should have got exactly 1 "campaign.created" delivery
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.error" should be ""
    And the JSON at "data.items.0.statusCode" should be at least 200
    And the JSON at "data.items.0.statusCode" should be less than 300

  @writes @delivery @DLV-10 @DLV-16
  Scenario: A redirect is a failed attempt, not followed
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 302 to the next 1 delivery
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Moved", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And within 10 seconds the receiver should get the same event again
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 2
    Then the JSON at "data.items.1.statusCode" should equal 302
    And the JSON at "data.items.1.error" should contain "receiver answered 302"
    And the JSON at "data.items.1.nextAttemptAt" should be a timestamp

  @writes @DLV-14 @DLV-16 @DLV-20
  Scenario: A destination nobody answers on is recorded with a generic reason, never the address
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/nobody-listens", "events": ["campaign.created"]}'
    Then the response status should be 200
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Unheard", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 1
    Then the JSON at "data.items.0.statusCode" should equal 0
    And the JSON at "data.items.0.error" should be one of "connection refused, destination not allowed by the sandbox's egress policy"

  @writes @DLV-17 @DLV-20
  Scenario: A link-local destination is refused once and never retried
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://169.254.169.254/latest", "events": ["*"]}'
    Then the response status should be 200
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Metadata", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 1
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0" should match:
      """
      {"attempt": 1, "statusCode": 0, "error": "destination not allowed by the sandbox's egress policy", "nextAttemptAt": null}
      """

  @writes @DLV-17 @DLV-20
  Scenario Outline: An unspecified destination is refused once and never retried: <url>
    An unspecified address reaches the machine itself wherever it is used,
    so it is refused whatever the egress flags; port 9 keeps a sandbox
    that breaks the rule from reaching anything.

    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "<url>", "events": ["*"]}'
    Then the response status should be 200
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Nowhere", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 1
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0" should match:
      """
      {"attempt": 1, "statusCode": 0, "error": "destination not allowed by the sandbox's egress policy", "nextAttemptAt": null}
      """

    Examples:
      | url                    |
      | http://0.0.0.0:9/hooks |
      | http://[::]:9/hooks    |

  @writes @delivery @DLV-1 @DLV-4 @DLV-8 @WH-7
  Scenario: Two webhooks for one event are each sent it once, with one Webhook-Id, and recorded apart
    Given a fresh sandbox account
    And I register 2 webhooks for "bug.created"
    And a bug with status "new"
    Then within 10 seconds the receiver should get a "bug.created" event
    And I save the header "Webhook-Id" as "firstId"
    And within 10 seconds the receiver should get a "bug.created" event
    And the header "Webhook-Id" should be "{firstId}"
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0, "scheduled": 0}
      """
    And the receiver should have got exactly 2 "bug.created" deliveries
    And the receiver should have got no "campaign.created" event
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.1.attempt" equal to 1
    Then the JSON at "data.items" should have 2 items
    And every item at "data.items" should have "error" equal to ""
    And every item at "data.items" should have "eventType" equal to "bug.created"
