@clock @sandbox @stable
Feature: Each account's clock
  Under -frozen-clock every account's clock starts stopped at one instant,
  and POST /_sandbox/clock {"advance": "<duration>"} moves the caller's
  clock, and no other: timestamps, the Date header, webhook timestamps and
  retries follow it. Without -frozen-clock the clocks run and cannot be
  moved. Scenarios tagged @frozen-clock or @running-clock run only where the
  sandbox's clocks are so; conform finds out before the first scenario.

  @running-clock @CLK-4
  Scenario: A running clock cannot be moved
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "90s"}'
    Then the response status should be 409
    And the response should be an error envelope
    And the error code should be "CONFLICT"

  @frozen-clock @writes @CLK-1 @ACCT-8
  Scenario: Every account starts at the same frozen instant
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "First", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.createdAt" as "atFirst"
    And I send a GET request to "/v1/campaigns/{random}"
    And I send a GET request to "/v1/testers"
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Second", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should equal the saved "atFirst"
    And the header "Date" should be at most the JSON at "data.createdAt"
    And the header "Date" should be greater than the JSON at "data.createdAt" minus 1

  @frozen-clock @writes @CLK-2 @CLK-6 @CLK-7 @ENV-11
  Scenario: A move shifts the account's time by exactly the advance
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Before", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.createdAt" as "before"
    And I send a POST request to "/_sandbox/clock" with the body '{"advance": "1h30m"}'
    Then the response status should be 200
    And the JSON at "data.now" should be a timestamp in UTC with milliseconds
    And the JSON at "data.now" should be equal to the saved "before" plus 5400
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "1500ms"}'
    Then the JSON at "data.now" should be greater than the saved "before" plus 5401
    And the JSON at "data.now" should be less than the saved "before" plus 5402
    When I send a POST request to "/v1/campaigns" with the body '{"name": "After", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should be greater than the saved "before" plus 5401
    And the JSON at "data.createdAt" should be less than the saved "before" plus 5402
    And the header "Date" should be greater than the saved "before" plus 5400
    And the header "Date" should be at most the JSON at "data.createdAt"
    And the JSON at "data.createdAt" should be a timestamp in UTC with milliseconds

  @frozen-clock @writes @CLK-1 @CLK-3
  Scenario: A move changes only the caller's clock
    Given I save "svc_test_conform_clock_a_{random}" as "keyA"
    And I save "svc_test_conform_clock_b_{random}" as "keyB"
    And I use the API key "{keyA}"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "A", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.createdAt" as "atA"
    Given I use the API key "{keyB}"
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "24h"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "B", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should be equal to the saved "atA" plus 86400
    Given I use the API key "{keyA}"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "A again", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should equal the saved "atA"
    And the header "Date" should be at most the saved "atA"
    And the header "Date" should be greater than the saved "atA" minus 1

  @frozen-clock @writes @CLK-7 @BUG-21 @RATE-6 @RATE-10 @RATE-16
  Scenario: Events, bug changes and rate-limit windows follow a moved clock
    Given a fresh sandbox account
    And a bug with status "new"
    And I save the JSON at "data.createdAt" as "filedAt"
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Reset" as "reset"
    And I send a POST request to "/_sandbox/clock" with the body '{"advance": "2h"}'
    And I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "confirmed"}'
    Then the JSON at "data.updatedAt" should be equal to the saved "filedAt" plus 7200
    And the JSON at "data.createdAt" should equal the saved "filedAt"
    And the header "X-RateLimit-Reset" should be at least the saved "reset" plus 7200
    And the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 1
    When I send a GET request to "/_sandbox/events?limit=1"
    Then the JSON at "data.items.0.type" should be "bug.updated"
    And the JSON at "data.items.0.createdAt" should be equal to the saved "filedAt" plus 7200

  @frozen-clock @writes @delivery @CLK-7 @DLV-6
  Scenario: A delivery is stamped with the account's clock
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "36h"}'
    And I save the JSON at "data.now" as "now"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Stamped", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should equal the saved "now"
    And within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    And the JSON at "createdAt" should equal the saved "now"
    And the header "Webhook-Timestamp" should be equal to the saved "now" in Unix seconds

  @frozen-clock @writes @delivery @DLV-11 @DLV-12 @DLV-13 @DLV-15 @CLK-7
  Scenario: Moving the clock past a retry makes it due at once, along the whole backoff schedule
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 500 to the next 5 deliveries
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Persistent", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And I save the header "Webhook-Id" as "messageId"
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 1
    Then the JSON at "data.items.0.nextAttemptAt" should be equal to the JSON at "data.items.0.at" plus 1
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "1s"}'
    Then within 5 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should be "{messageId}"
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 2
    Then the JSON at "data.items.0.nextAttemptAt" should be equal to the JSON at "data.items.0.at" plus 2
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "2s"}'
    Then within 5 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should be "{messageId}"
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 3
    Then the JSON at "data.items.0.nextAttemptAt" should be equal to the JSON at "data.items.0.at" plus 4
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "4s"}'
    Then within 3 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should be "{messageId}"
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 4
    Then the JSON at "data.items.0.nextAttemptAt" should be equal to the JSON at "data.items.0.at" plus 8
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "7s"}'
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0, "scheduled": 1}
      """
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "1s"}'
    Then within 3 seconds the receiver should get a "campaign.created" event
    And the header "Webhook-Id" should be "{messageId}"
    When within 5 seconds the GET request to "/_sandbox/deliveries" should answer with the JSON at "data.items.0.attempt" equal to 5
    Then the JSON at "data.items.0.nextAttemptAt" should equal null
    And the JSON at "data.items.0.statusCode" should equal 500
    And the JSON at "data.items" should have 5 items
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "1h"}'
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0, "scheduled": 0}
      """
    And the receiver should have got exactly 5 "campaign.created" deliveries

  @frozen-clock @CLK-5 @ERR-6
  Scenario Outline: A move must be a positive duration of at most 366 days: <advance>
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": <advance>}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "advance"

    Examples:
      | advance   |
      | "-5s"     |
      | "0s"      |
      | "8785h"   |
      | "2y"      |
      | "soon"    |
      | ""        |
      | 90        |
      | null      |

  @frozen-clock @CLK-5
  Scenario: A move of exactly 366 days is accepted
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "8784h"}'
    Then the response status should be 200
    And the JSON at "data.now" should be a timestamp in UTC with milliseconds

  @frozen-clock @writes @CLK-8 @CLK-1
  Scenario: The clock control reads the caller's time, frozen, and its move
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Now", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.createdAt" as "createdAt"
    And I send a GET request to "/_sandbox/clock"
    Then the response status should be 200
    And the JSON at "data.now" should equal the saved "createdAt"
    And the JSON at "data.frozen" should equal true
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "90s"}'
    And I send a GET request to "/_sandbox/clock"
    Then the JSON at "data.now" should be equal to the saved "createdAt" plus 90

  @running-clock @CLK-8 @CLK-4
  Scenario: The clock control reads a running clock
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/clock"
    Then the response status should be 200
    And the JSON at "data.frozen" should equal false
    And the JSON at "data.now" should be a timestamp in UTC with milliseconds
    And I save the JSON at "data.now" as "before"
    When I send a GET request to "/v1/analytics"
    And I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items.0.at" should be at least the saved "before"
