@testers @beta
Feature: Testers
  Spec §4: GET /v1/testers lists available testers; it is a beta endpoint.
  Query parameters and the response shape are not shown, so beyond the
  envelope the checks are the sandbox's: a page of tester records with id,
  name, platforms, country, rating and available, filterable by platform.

  @must
  Scenario: Listing testers succeeds
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the response should be a success envelope

  @sandbox
  Scenario: A fresh account is seeded with testers
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {"items": "<array>", "hasMore": "<boolean>", "nextCursor": "<string|null>"}
      """
    And the JSON at "data.items" should have at least 3 items
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

  @sandbox
  Scenario: Testers filter by platform
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?platform=ios&limit=100"
    Then the response status should be 200
    And the JSON at "data.items" should have at least 1 item

  @sandbox
  Scenario: Testers page with limit
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?limit=1"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.hasMore" should equal true

  @sandbox
  Scenario: An unknown platform filter is 400 INVALID_PARAMETER
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers?platform=symbian"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"
