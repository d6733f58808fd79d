@sandbox @lists
Feature: Lists, cursors and filters, as a client pages through them
  Pages are newest first and a cursor marks a place in the list, so a
  record written between two pages does not move the next one.

  @writes
  Scenario: A campaign created between two pages does not shift the next page
    Rules: LIST-2, LIST-8, LIST-9.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "First", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "first"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Second", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Third", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns?limit=2"
    Then the JSON at "data.items.0.name" should be "Third"
    And the JSON at "data.items.1.name" should be "Second"
    And the JSON at "data.hasMore" should equal true
    And I save the JSON at "data.nextCursor" as "cursor"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Between", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "between"
    And I send a GET request to "/v1/campaigns?limit=2&cursor={cursor}"
    Then the response status should be 200
    And the JSON at "data.items.0.id" should equal the saved "first"
    And no item at "data.items" should have "id" equal to "{between}"
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.id" should equal the saved "between"

  @writes
  Scenario: A bug filed between two pages of a filtered list does not shift the next page
    Rules: LIST-9, LIST-10, CTL-4.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Bugs", "platform": "android", "testersRequired": 2, "rewardPerBug": 10}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "One", "severity": "low"}'
    And I save the JSON at "data.id" as "one"
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Two", "severity": "high"}'
    And I send a GET request to "/v1/bugs?campaignId={campaignId}&limit=1"
    Then the JSON at "data.items.0.title" should be "Two"
    And I save the JSON at "data.nextCursor" as "cursor"
    When I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Three", "severity": "critical"}'
    And I send a GET request to "/v1/bugs?campaignId={campaignId}&limit=1&cursor={cursor}"
    Then the JSON at "data.items.0.id" should equal the saved "one"
    And the JSON at "data.hasMore" should equal false
    And the JSON at "data.nextCursor" should equal null

  Scenario: Walking a list and a filtered list gives every item once
    Rules: LIST-4, LIST-7, LIST-8.

    Given a fresh sandbox account
    Then walking "/v1/bugs" with limit 2 should give every item once, newest first
    And walking "/v1/campaigns?platform=ios" with limit 1 should give every item once, newest first
    And walking "/v1/testers" with limit 100 should give every item once, newest first

  Scenario: A filter gives exactly the matching items
    Rules: LIST-10, BUG-6, CMP-15, TST-3.

    Given a fresh sandbox account
    Then filtering by "severity" = "critical" on "/v1/bugs" should give exactly the matching items
    And filtering by "status" = "resolved" on "/v1/bugs" should give exactly the matching items
    And filtering by "status" = "draft" on "/v1/campaigns" should give exactly the matching items
    And filtering by "platform" = "web" on "/v1/testers" should give exactly the matching items by "platforms"

  @writes
  Scenario: Filters combine
    Rules: LIST-10, LIST-13.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Web draft", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "webDraft"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "iOS draft", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "iosDraft"
    And I send a GET request to "/v1/campaigns?status=draft&platform=web&limit=100"
    Then the response status should be 200
    And every item at "data.items" should have "status" equal to "draft"
    And every item at "data.items" should have "platform" equal to "web"
    And the items at "data.items" should include one with "id" equal to "{webDraft}"
    And no item at "data.items" should have "id" equal to "{iosDraft}"

  Scenario: Filter values outside their set are refused, unknown ids give an empty list
    Rules: LIST-11, LIST-12.

    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=open"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"
    When I send a GET request to "/v1/bugs?severity=blocker"
    Then the error code should be "INVALID_PARAMETER"
    When I send a GET request to "/v1/campaigns?platform=windows"
    Then the error code should be "INVALID_PARAMETER"
    When I send a GET request to "/v1/bugs?campaignId=cmp_999999"
    Then the response status should be 200
    And the JSON at "data.items" should be empty
    And the JSON at "data.hasMore" should equal false

  Scenario Outline: Page sizes and cursors at and beyond their bounds
    Rules: LIST-3, LIST-4, LIST-5, LIST-6.

    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?<query>"
    Then the response status should be <status>

    Examples:
      | query          | status |
      | limit=1        | 200    |
      | limit=100      | 200    |
      | limit=0        | 400    |
      | limit=101      | 400    |
      | limit=-1       | 400    |
      | limit=2.5      | 400    |
      | limit=ten      | 400    |
      | cursor=abc     | 400    |
