@webhooks @stable
Feature: Webhooks
  Spec §4, §6: POST /v1/webhooks registers a webhook endpoint. Body fields,
  event kinds, payloads and signing are not shown, so beyond the envelope the
  checks are the sandbox's: "url" (absolute http or https) and "events"
  (non-empty; campaign.created, bug.created, bug.updated or *), answered with
  id, url, events, secret ("whsec_…"), status ("active") and createdAt.
  Scenarios tagged @delivery register conform's own receiver ({webhookURL}) and
  check what arrives: the three headers, the HMAC-SHA256 signature with the
  registered secret, the body, event-type filtering and a retry after a 500.

  @must @writes @WH-1
  Scenario: Registering conform's receiver succeeds
    The spec shows no body fields: the receiver's address goes under "url",
    then under other usual names, until the deployment accepts one. A
    deployment that accepts none is not judged.

    When I register conform's receiver as a webhook
    Then the response status should be one of "200, 201"
    And the response should be a success envelope
    And the rate-limit headers should be present as integers

  @should @ERR-1
  Scenario: Registering with malformed JSON is a client error
    When I send a POST request to "/v1/webhooks" with the body '{"url": '
    Then the response status should be 400
    And the response should be an error envelope

  @sandbox @writes @WH-1 @WH-5
  Scenario: A registered webhook comes back with its signing secret
    Given a fresh sandbox account
    When I register a webhook for "campaign.created, bug.updated"
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data" should match:
      """
      {
        "id": "<id>",
        "url": "{webhookURL}",
        "events": ["campaign.created", "bug.updated"],
        "secret": "<string>",
        "status": "active",
        "createdAt": "<timestamp>"
      }
      """
    And the JSON at "data.id" should start with "whk_"
    And the JSON at "data.secret" should start with "whsec_"

  @sandbox @writes @WH-3
  Scenario: A webhook may subscribe to every event
    Given a fresh sandbox account
    When I register a webhook for "*"
    Then the response status should be 200
    And the JSON at "data.events" should equal ["*"]

  @sandbox @WH-2 @WH-3
  Scenario Outline: An invalid registration is 400 VALIDATION_ERROR: <case>
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '<body>'
    Then the response status should be 400
    And the response should be an error envelope
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "<field>"

    Examples:
      | case              | field  | body                                                          |
      | a relative url    | url    | {"url": "/hooks", "events": ["bug.created"]}                  |
      | an ftp url        | url    | {"url": "ftp://127.0.0.1:9/hooks", "events": ["bug.created"]} |
      | no events         | events | {"url": "http://127.0.0.1:9/hooks", "events": []}            |
      | an unknown event  | events | {"url": "http://127.0.0.1:9/hooks", "events": ["bug.eaten"]} |

  @sandbox @writes @delivery @DLV-1 @DLV-2 @DLV-3 @DLV-6 @DLV-7 @EVT-1
  Scenario: A campaign.created event is delivered, signed with the secret
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hooked", "platform": "ios", "testersRequired": 3, "rewardPerBug": 7.50}'
    And I save the JSON at "data.id" as "campaignId"
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    And the header "Webhook-Id" should be present
    And the header "Content-Type" should contain "application/json"
    And the JSON at "" should match:
      """
      {"id": "<id>", "type": "campaign.created", "createdAt": "<timestamp>", "data": {"id": "{campaignId}", "name": "Hooked", "status": "draft"}}
      """
    And the JSON at "id" should start with "evt_"
    And the response body should contain "7.50"

  @sandbox @writes @delivery @ENV-11 @EVT-2
  Scenario: Event timestamps are RFC 3339 in UTC with milliseconds
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Stamped", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And every timestamp in the response should be in UTC with milliseconds

  @sandbox @writes @delivery @DLV-1
  Scenario: Only the subscribed event types are delivered
    Given a fresh sandbox account
    And I register a webhook for "bug.created"
    And a bug with status "confirmed"
    Then within 10 seconds the receiver should get a "bug.created" event
    And the delivery should be signed with the webhook's secret
    And the JSON at "data.id" should equal the saved "bugId"
    And the JSON at "data.status" should be "new"
    And the receiver should have got no "campaign.created" event
    And the receiver should have got no "bug.updated" event

  @sandbox @writes @delivery @EVT-1 @DLV-1
  Scenario: A bug change is delivered as bug.updated
    Given a fresh sandbox account
    And I register a webhook for "*"
    And a bug with status "confirmed"
    Then within 10 seconds the receiver should get a "bug.updated" event
    And the delivery should be signed with the webhook's secret
    And the JSON at "data.id" should equal the saved "bugId"
    And the JSON at "data.status" should be "confirmed"

  @sandbox @writes @delivery @DLV-9 @DLV-4
  Scenario: A delivery answered with 500 is retried with the same Webhook-Id
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 500 to the next 1 delivery
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Retried", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And within 15 seconds the receiver should get the same event again
    And the delivery should be signed with the webhook's secret

  @sandbox @writes @delivery @DLV-5
  Scenario: Webhook-Id is unique across accounts
    DLV-5: Webhook-Id is derived from the key and the event id, so that
    the same event id in two accounts gives two ids a receiver can tell apart.

    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Twin", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And I save the header "Webhook-Id" as "firstWebhookId"
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Twin", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should not be "{firstWebhookId}"

  @sandbox @writes @delivery @DLV-5 @RESET-4
  Scenario: Webhook-Id differs after a reset of the account
    DLV-5: the account's count of resets goes into Webhook-Id, so that the
    same event id after a reset, as IDs start over (RESET-3), is a new
    message to a receiver that de-duplicates.

    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Before", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    Then within 10 seconds the receiver should get a "campaign.created" event
    And I save the header "Webhook-Id" as "firstWebhookId"
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    And I send a POST request to "/_sandbox/reset"
    And I register a webhook for "campaign.created"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "After", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.id" should equal the saved "campaignId"
    And within 10 seconds the receiver should get a "campaign.created" event
    And the JSON at "data.name" should be "After"
    And the delivery should be signed with the webhook's secret
    And the header "Webhook-Id" should match the pattern "^msg_[0-9a-f]{32}$"
    And the header "Webhook-Id" should not be "{firstWebhookId}"
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the receiver should have got exactly 2 "campaign.created" deliveries

  @sandbox @frozen-clock @writes @delivery @DLV-13 @DLV-4
  Scenario: A retry the moved clock passed comes at once, long before its time in real time
    Each move comes as soon as the attempt before it arrived: the retries
    are due on the account's clock at once, and 1, 2, 4 and 8 seconds
    later in real time, so that one that waits for real time is late.

    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 500 to the next 4 deliveries
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hurried", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And I save the header "Webhook-Id" as "messageId"
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "1s"}'
    Then within 2 seconds the receiver should get a "campaign.created" event
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "2s"}'
    Then within 2 seconds the receiver should get a "campaign.created" event
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "4s"}'
    Then within 2 seconds the receiver should get a "campaign.created" event
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "8s"}'
    Then within 2 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should be "{messageId}"
    And the delivery should be signed with the webhook's secret

  @sandbox @frozen-clock @writes @delivery @DLV-6 @DLV-15 @DLV-26 @CLK-7
  Scenario: A delivery, its retry and their records follow the account's moved clock
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 500 to the next 1 delivery
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "2h"}'
    And I save the JSON at "data.now" as "now"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Moved", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    And the header "Webhook-Timestamp" should be equal to the saved "now" in Unix seconds
    And the header "X-Sandbox-Now" should be equal to the saved "now" in Unix seconds
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 1
    Then the JSON at "data.items.0.at" should equal the saved "now"
    And the JSON at "data.items.0.nextAttemptAt" should be equal to the saved "now" plus 1
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "1s"}'
    Then within 5 seconds the receiver should get the same event again
    And the delivery should be signed with the webhook's secret
    And the header "X-Sandbox-Now" should be equal to the header "Webhook-Timestamp"

  @sandbox @writes @WH-6
  Scenario: An account holds at most 16 webhooks
    Given a fresh sandbox account
    When I register 16 webhooks for "*"
    And I send a POST request to "/v1/webhooks" with the body '{"url": "{webhookURL}", "events": ["*"]}'
    Then the response status should be 409
    And the response should be an error envelope
    And the error code should be "LIMIT_REACHED"

  @sandbox @writes @WH-6 @WH-2 @WH-3
  Scenario: A refused registration does not count toward the 16 webhooks of an account
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "ftp://127.0.0.1:9/hooks", "events": ["*"]}'
    Then the response status should be 400
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/hooks", "events": ["bug.eaten"]}'
    Then the response status should be 400
    When I register 16 webhooks for "*"
    And I send a POST request to "/v1/webhooks" with the body '{"url": "{webhookURL}", "events": ["*"]}'
    Then the response status should be 409
    And the error code should be "LIMIT_REACHED"

  @sandbox @writes @WH-4
  Scenario: An event type listed twice is kept once
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/twice", "events": ["bug.created", "bug.updated", "bug.created"]}'
    Then the response status should be 200
    And the JSON at "data.events" should have 2 items
    And the JSON at "data.events" should contain "bug.created"
    And the JSON at "data.events" should contain "bug.updated"

  @sandbox @writes @WH-7
  Scenario: The same URL registered twice is two webhooks, each with its own id and secret
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/same", "events": ["*"]}'
    And I save the JSON at "data.id" as "firstHook"
    And I save the JSON at "data.secret" as "firstSecret"
    And I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/same", "events": ["*"]}'
    Then the response status should be 200
    And the JSON at "data.id" should not equal the saved "firstHook"
    And the JSON at "data.secret" should not equal the saved "firstSecret"

  @sandbox @writes @WH-2 @WH-3
  Scenario Outline: Registering <case> is refused
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '<body>'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"

    Examples:
      | case              | body                                                  |
      | no url            | {"events": ["bug.created"]}                           |
      | no events         | {"url": "http://127.0.0.1:9/hooks"}                  |
      | events not a list | {"url": "http://127.0.0.1:9/hooks", "events": "*"}   |
      | a url without host | {"url": "https:///hooks", "events": ["*"]}           |

  @sandbox @writes @delivery @CLK-10 @DLV-8 @DLV-14
  Scenario: Settling waits until the account's deliveries are done
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver holds its answers until released
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Settled", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 300}'
    Then the response status should be 200
    And the response should have taken at least 300 ms
    And the JSON at "data" should match:
      """
      {"settled": false, "inFlight": 1, "queued": 0, "due": 0}
      """
    When the receiver releases its held answers
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0}
      """
    And the receiver should have got exactly 1 "campaign.created" delivery
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.statusCode" should be at least 200
    And the JSON at "data.items.0.statusCode" should be less than 300
    And the JSON at "data.items.0.error" should be ""

  @sandbox @writes @delivery @DLV-25 @DLV-26
  Scenario: A delivery the receiver got is in the delivery records read at once, without a settle
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Read at once", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the header "X-Sandbox-Now" should be equal to the header "Webhook-Timestamp"
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.eventType" should be "campaign.created"
    And the JSON at "data.items.0.statusCode" should be at least 200
    And the JSON at "data.items.0.statusCode" should be less than 300

  @sandbox @writes @delivery @faults @FAULT-33 @FAULT-34 @FAULT-39
  Scenario: A duplicate webhook fault delivers the event twice with one Webhook-Id, and the records say so
    Given a fresh sandbox account
    And I register a webhook for "campaign.created, bug.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "webhook": "duplicate"}'
    And I save the JSON at "data.id" as "faultId"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Twice", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    And I save the header "Webhook-Id" as "firstId"
    And within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    And the header "Webhook-Id" should be "{firstId}"
    And the JSON at "data.id" should equal the saved "campaignId"
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Once", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the receiver should have got exactly 3 "campaign.created" deliveries
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 3 items
    And the JSON at "data.items.0.fault" should equal null
    And the JSON at "data.items.1" should match:
      """
      {"attempt": 1, "fault": {"id": "{faultId}", "webhook": "duplicate", "count": 0, "fired": 1}}
      """
    And the JSON at "data.items.2" should match:
      """
      {"attempt": 1, "fault": {"id": "{faultId}", "webhook": "duplicate", "count": 0, "fired": 1}}
      """
    When I send a GET request to "/_sandbox/requests?path=/v1/campaigns"
    Then the JSON at "data.items.0.deliveryFaults" should not exist
    And the JSON at "data.items.1.deliveryFaults.0.id" should equal the saved "faultId"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty

  @sandbox @writes @delivery @faults @FAULT-35
  Scenario: A reorder webhook fault delivers the event after the next one to the same webhook
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "webhook": "reorder"}'
    And I save the JSON at "data.id" as "faultId"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "First made", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Second made", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the JSON at "data.name" should be "Second made"
    And within 10 seconds the receiver should get a "campaign.created" event
    And the JSON at "data.name" should be "First made"
    And the delivery should be signed with the webhook's secret
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the receiver should have got exactly 2 "campaign.created" deliveries
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 2 items
    And the items at "data.items" should include one with "fault.id" equal to "{faultId}"

  @sandbox @frozen-clock @writes @delivery @faults @FAULT-36
  Scenario: A delayed webhook fault holds the delivery until the account's clock passes it
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "delayMs": 30000}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Later", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 200}'
    Then the JSON at "data.scheduled" should equal 1
    And no further "campaign.created" delivery should reach the receiver within 1 second
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "31s"}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret

  @sandbox @writes @delivery @faults @FAULT-37 @FAULT-38 @DLV-26
  Scenario: Bad-signature and stale-timestamp webhook faults make deliveries a receiver must refuse
    Given a fresh sandbox account
    And I register a webhook for "campaign.created, bug.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "webhook": "badSignature"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Forged", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery's signature should not verify with the webhook's secret
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "bug.created", "webhook": "staleTimestamp"}'
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Stale", "severity": "low"}'
    Then within 10 seconds the receiver should get a "bug.created" event
    And the delivery should be signed with the webhook's secret over a Webhook-Timestamp 600 seconds before the event
    And the header "X-Sandbox-Now" should be equal to the header "Webhook-Timestamp" plus 600
