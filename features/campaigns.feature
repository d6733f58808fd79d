@campaigns @stable
Feature: Campaigns
  Spec §2–§4: a campaign is created with POST /v1/campaigns from name,
  platform, testersRequired and rewardPerBug, and comes back with at least id,
  name, status ("draft") and createdAt (ISO 8601). GET /v1/campaigns lists
  campaigns and GET /v1/campaigns/:id returns one. Success is 200 (§7 lists
  no other success status); creation may reasonably answer 201, which the
  spec-level checks accept.

  @must
  Scenario: Listing campaigns succeeds
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the response should be a success envelope

  @must @writes
  Scenario: A new campaign is a draft
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Conformance launch", "platform": "ios", "testersRequired": 5, "rewardPerBug": 19.99}
      """
    Then the response status should be one of "200, 201"
    And the response should be a success envelope
    And the JSON at "data" should match:
      """
      {"id": "<id>", "name": "Conformance launch", "status": "draft", "createdAt": "<timestamp>"}
      """

  @must @writes
  Scenario: A created campaign can be read back with its details and status
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Read back", "platform": "ios", "testersRequired": 12, "rewardPerBug": 7.5}
      """
    And I save the JSON at "data.id" as "campaignId"
    And I send a GET request to "/v1/campaigns/{campaignId}"
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data" should match:
      """
      {
        "id": "{campaignId}",
        "name": "Read back",
        "platform": "ios",
        "testersRequired": 12,
        "rewardPerBug": 7.5,
        "status": "draft",
        "createdAt": "<timestamp>"
      }
      """
    And the JSON at "data.testersRequired" should be an integer
    And the JSON at "data.rewardPerBug" should be a number

  @sandbox @writes
  Scenario: Creation is 200 with the whole campaign record
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Sandbox launch", "platform": "android", "testersRequired": 3, "rewardPerBug": 19.99, "colour": "ignored"}
      """
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {
        "id": "<id>",
        "name": "Sandbox launch",
        "platform": "android",
        "testersRequired": 3,
        "rewardPerBug": 19.99,
        "status": "draft",
        "createdAt": "<timestamp>"
      }
      """
    And the JSON at "data.id" should start with "cmp_"
    And the JSON at "data.colour" should not exist

  @sandbox @writes
  Scenario: A reward is returned exactly as sent
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Cents", "platform": "web", "testersRequired": 1, "rewardPerBug": 0.1}'
    Then the response status should be 200
    And the JSON at "data.rewardPerBug" should equal 0.1

  @sandbox @writes
  Scenario: A new campaign is listed first
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Newest", "platform": "web", "testersRequired": 2, "rewardPerBug": 3}
      """
    And I save the JSON at "data.id" as "campaignId"
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {"items": "<array>", "hasMore": "<boolean>", "nextCursor": "<string|null>"}
      """
    And the JSON at "data.items.0.id" should equal the saved "campaignId"
    And the items at "data.items" should be ordered by "createdAt" descending

  @sandbox @writes
  Scenario: The same requests give the same ids in every fresh account
    SDK tests use a random key per test and still keep golden files.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Golden", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "firstAccountId"
    And a fresh sandbox account
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Golden", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.id" should equal the saved "firstAccountId"

  @sandbox
  Scenario: A fresh account is seeded with campaigns
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data.items" should have at least 3 items
    And the JSON at "data.items.0" should match:
      """
      {
        "id": "<id>",
        "name": "<string>",
        "platform": "<string>",
        "testersRequired": "<integer>",
        "rewardPerBug": "<number>",
        "status": "<string>",
        "createdAt": "<timestamp>"
      }
      """

  @sandbox
  Scenario: Lists page with limit and cursor
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.hasMore" should equal true
    And the JSON at "data.nextCursor" should be a string
    When I save the JSON at "data.items.0.id" as "firstId"
    And I save the JSON at "data.nextCursor" as "cursor"
    And I send a GET request to "/v1/campaigns?limit=1&cursor={cursor}"
    Then the response status should be 200
    And the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should not equal the saved "firstId"

  @sandbox
  Scenario Outline: A bad list parameter is 400 INVALID_PARAMETER: <query>
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?<query>"
    Then the response status should be 400
    And the response should be an error envelope
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query              |
      | limit=0            |
      | limit=101          |
      | limit=many         |
      | cursor=not-a-cursor |
      | status=no-such-status |
      | platform=symbian   |

  @sandbox @writes
  Scenario: Lists filter by status and platform
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Filtered", "platform": "android", "testersRequired": 2, "rewardPerBug": 3}
      """
    And I send a GET request to "/v1/campaigns?status=draft&platform=android"
    Then the response status should be 200
    And the JSON at "data.items" should have at least 1 item
    And every item at "data.items" should have "status" equal to "draft"
    And every item at "data.items" should have "platform" equal to "android"
