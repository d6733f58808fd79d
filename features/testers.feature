@testers @beta
Feature: Testers
  Spec §4: GET /v1/testers lists available testers; it is a beta endpoint.
  Query parameters and the response shape are not shown, so beyond the
  envelope the checks are the sandbox's: a page of tester records with id,
  name, platforms, country, rating and available, filterable by platform.

  @must @TST-1
  Scenario: Listing testers succeeds
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the response should be a success envelope

  @sandbox @TST-2
  Scenario: Testers have the documented fields
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {"items": "<array>", "hasMore": "<boolean>", "nextCursor": "<string|null>"}
      """
    And the JSON at "data.items" should have at least 1 item
    And the JSON at "data.items.0" should match:
      """
      {
        "id": "<id>",
        "name": "<string>",
        "platforms": "<array>",
        "country": "<string>",
        "rating": "<number>",
        "available": "<boolean>",
        "createdAt": "<timestamp>"
      }
      """
    And the JSON at "data.items.0.id" should start with "tst_"
    And the JSON at "data.items.0.platforms.0" should be one of "ios, android, web"

  @sandbox @ENV-11
  Scenario: Tester timestamps are RFC 3339 in UTC with milliseconds
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?limit=100"
    Then every timestamp in the response should be in UTC with milliseconds

  @sandbox @seed @ACCT-3
  Scenario: A fresh account is seeded with 6 testers
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    Then the JSON at "data.items" should have 6 items

  @sandbox @TST-3
  Scenario Outline: Testers filter by platform <platform> alone, exactly
    Given a fresh sandbox account
    Then filtering by "platform" = "<platform>" on "/v1/testers" should give exactly the matching items by "platforms"

    Examples:
      | platform |
      | ios      |
      | android  |
      | web      |

  @sandbox @LIST-8
  Scenario Outline: Testers are walked page by page without loss or repeat, <limit> a page
    Given a fresh sandbox account
    Then walking "/v1/testers" with limit <limit> should give every item once, newest first

    Examples:
      | limit |
      | 1     |
      | 2     |

  @sandbox @LIST-5 @LIST-11
  Scenario Outline: A bad tester parameter is 400 INVALID_PARAMETER: <query>
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?<query>"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query            |
      | platform=symbian |
      | platform=IOS     |
      | platform=%20web  |
      | limit=0          |
      | limit=101        |
