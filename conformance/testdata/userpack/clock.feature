@sandbox @clock
Feature: Moving an account's frozen clock
  These scenarios need a sandbox started with -frozen-clock: without it,
  POST /_sandbox/clock is 409 CONFLICT (CLK-4).

  @writes
  Scenario: A move shifts new timestamps by exactly the move
    Rules: CLK-2, CLK-7, ENV-11.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Before", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.createdAt" as "before"
    And I send a POST request to "/_sandbox/clock" with the body '{"advance": "90s"}'
    Then the response status should be 200
    And the JSON at "data.now" should be a timestamp in UTC with milliseconds
    And the JSON at "data.now" should be equal to the saved "before" plus 90
    When I send a POST request to "/v1/campaigns" with the body '{"name": "After", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should be equal to the saved "before" plus 90
    And the JSON at "data.createdAt" should be a timestamp in UTC with milliseconds

  @writes
  Scenario: A move changes only the caller's clock
    Rules: CLK-1, CLK-3.

    Given I save "svc_test_userpack_a_{random}" as "keyA"
    And I save "svc_test_userpack_b_{random}" as "keyB"
    And I use the API key "{keyA}"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "A", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.createdAt" as "atA"
    Given I use the API key "{keyB}"
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "1h"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "B", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should be equal to the saved "atA" plus 3600
    Given I use the API key "{keyA}"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "A again", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should be equal to the saved "atA"

  Scenario: A move past the end of the minute starts a new rate-limit window
    Rules: RATE-6, RATE-10, RATE-16.

    Given a fresh sandbox account
    When I send 3 GET requests to "/v1/testers"
    And I save the header "X-RateLimit-Reset" as "reset"
    And I save the header "X-RateLimit-Remaining" as "remaining"
    And I send a POST request to "/_sandbox/clock" with the body '{"advance": "60s"}'
    And I send a GET request to "/v1/testers"
    Then the header "X-RateLimit-Reset" should be equal to the saved "reset" plus 60
    And the header "X-RateLimit-Remaining" should be equal to the saved "remaining" plus 2

  @writes @delivery
  Scenario: A retry comes when the clock is moved past it
    Rules: DLV-13, CLK-9.

    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver answers 503 to the next 1 delivery
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Waiting", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "5s"}'
    Then within 5 seconds the receiver should get the same event again
    And the receiver should have got exactly 2 "campaign.created" deliveries

  Scenario Outline: A move must be a positive duration of at most a year
    Rules: CLK-5.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "<advance>"}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"

    Examples:
      | advance |
      | -5s     |
      | 0s      |
      | 2y      |
      | 9000h   |
      | soon    |
