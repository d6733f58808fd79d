@campaigns @stable
Feature: Campaigns
  Spec §2–§4: a campaign is created with POST /v1/campaigns from name,
  platform, testersRequired and rewardPerBug, and comes back with at least id,
  name, status ("draft") and createdAt (ISO 8601). GET /v1/campaigns lists
  campaigns and GET /v1/campaigns/:id returns one. Success is 200 (§7 lists
  no other success status); creation may reasonably answer 201, which the
  spec-level checks accept.

  @must @CMP-5
  Scenario: Listing campaigns succeeds
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the response should be a success envelope

  @must @writes @CMP-1 @CMP-3
  Scenario: A new campaign is a draft
    Names carry a random part: a deployment may hold names unique per
    account, and every run writes to the same key.

    Given I save "Conformance launch {random}" as "name"
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "{name}", "platform": "ios", "testersRequired": 5, "rewardPerBug": 19.99}
      """
    Then the response status should be one of "200, 201"
    And the response should be a success envelope
    And the JSON at "data" should match:
      """
      {"id": "<id>", "name": "{name}", "status": "draft", "createdAt": "<timestamp>"}
      """

  @must @writes @CMP-6 @CMP-7
  Scenario: A created campaign can be read back with its details and status
    Given I save "Read back {random}" as "name"
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "{name}", "platform": "ios", "testersRequired": 12, "rewardPerBug": 7.5}
      """
    And I save the JSON at "data.id" as "campaignId"
    And I send a GET request to "/v1/campaigns/{campaignId}"
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data" should match:
      """
      {
        "id": "{campaignId}",
        "name": "{name}",
        "platform": "ios",
        "testersRequired": 12,
        "rewardPerBug": 7.5,
        "status": "draft",
        "createdAt": "<timestamp>"
      }
      """
    And the JSON at "data.testersRequired" should be an integer
    And the JSON at "data.rewardPerBug" should be a number

  @should @writes @CMP-5
  Scenario: A created campaign is in the list
    "List all test campaigns" (§4), in a shape the spec does not show: the
    campaign is looked for among the objects of the answer with a string
    id. When it is not on the first page and the answer says more follow,
    the kit cannot page without knowing how, and does not judge.

    Given I save "Listed {random}" as "name"
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "{name}", "platform": "ios", "testersRequired": 5, "rewardPerBug": 19.99}
      """
    And I save the "id" of a record at "data" as "campaignId"
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the answer should hold a record with id "{campaignId}"

  @sandbox @writes @CMP-2 @CMP-8 @CMP-17 @ENV-10
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

  @sandbox @writes @CMP-13
  Scenario Outline: A reward of <reward> is returned exactly as sent, written and read back
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Cents", "platform": "web", "testersRequired": 1, "rewardPerBug": <reward>}'
    Then the response status should be 200
    And the JSON at "data.rewardPerBug" should equal <reward>
    And the response body should contain ""rewardPerBug":<reward>,"
    When I save the JSON at "data.id" as "campaignId"
    And I send a GET request to "/v1/campaigns/{campaignId}"
    Then the response body should contain ""rewardPerBug":<reward>,"
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the response body should contain ""rewardPerBug":<reward>,"

    Examples:
      | reward |
      | 0.1    |
      | 7.50   |
      | 19.99  |
      | 0.05   |
      | 100    |

  @sandbox @writes @LIST-2
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

  @sandbox @writes @ACCT-5
  Scenario: The same requests give the same ids in every fresh account
    SDK tests use a random key per test and still keep golden files.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Golden", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "firstAccountId"
    And a fresh sandbox account
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Golden", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.id" should equal the saved "firstAccountId"

  @sandbox @seed @ACCT-3
  Scenario: A fresh account is seeded with campaigns
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data.items" should have 4 items
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

  @sandbox @writes @ENV-11 @CMP-4
  Scenario: Timestamps are RFC 3339 in UTC with milliseconds
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Clock", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the JSON at "data.createdAt" should be a timestamp in UTC with milliseconds
    When I send a GET request to "/v1/campaigns?limit=100"
    Then every timestamp in the response should be in UTC with milliseconds

  @sandbox @writes @LIST-4 @LIST-6 @LIST-7
  Scenario: Lists page with limit and cursor
    Given a fresh sandbox account
    When I send 2 POST requests to "/v1/campaigns" with the body '{"name": "Paged", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.hasMore" should equal true
    And the JSON at "data.nextCursor" should be a string
    When I save the JSON at "data.items.0.id" as "firstId"
    And I save the JSON at "data.nextCursor" as "cursor"
    And I send a GET request to "/v1/campaigns?limit=1&cursor={cursor}"
    Then the response status should be 200
    And the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should not equal the saved "firstId"

  @sandbox @writes @LIST-3
  Scenario: A list has 20 items a page by default
    Given a fresh sandbox account
    When I send 21 POST requests to "/v1/campaigns" with the body '{"name": "Default page", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the JSON at "data.items" should have 20 items
    And the JSON at "data.hasMore" should equal true
    And the JSON at "data.nextCursor" should be a string

  @sandbox @writes @LIST-4
  Scenario: A list gives up to 100 items a page, and no more
    Given a fresh sandbox account
    When I send 21 POST requests to "/v1/campaigns" with the body '{"name": "Big page", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns?limit=100"
    Then the response status should be 200
    And the JSON at "data.items" should have at least 21 items
    And the JSON at "data.items" should have at most 100 items
    And the JSON at "data.hasMore" should equal false
    And the JSON at "data.nextCursor" should equal null

  @sandbox @writes @LIST-8
  Scenario Outline: Campaigns are walked page by page without loss or repeat, <limit> a page
    Given a fresh sandbox account
    When I send 5 POST requests to "/v1/campaigns" with the body '{"name": "Walked", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}'
    Then walking "/v1/campaigns" with limit <limit> should give every item once, newest first
    And the JSON at "items" should have at least 5 items

    Examples:
      | limit |
      | 1     |
      | 2     |
      | 3     |

  @sandbox @LIST-5 @LIST-6
  Scenario Outline: A bad list parameter is 400 INVALID_PARAMETER: <query>
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?<query>"
    Then the response status should be 400
    And the response should be an error envelope
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query                 |
      | limit=0               |
      | limit=101             |
      | limit=-1              |
      | limit=many            |
      | limit=2.5             |
      | cursor=not-a-cursor   |
      | status=no-such-status |
      | platform=symbian      |
      | status=ACTIVE         |
      | status=Draft          |
      | status=%20draft       |
      | platform=IOS          |
      | platform=web%20       |
      | limit=1.0             |

  @sandbox @writes @CMP-15 @LIST-10
  Scenario Outline: Campaigns filter by <filter> = <value> alone, exactly
    Every campaign of the unfiltered list with that value comes back, in
    order, and no other.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Filtered", "platform": "android", "testersRequired": 2, "rewardPerBug": 3}'
    Then filtering by "<filter>" = "<value>" on "/v1/campaigns" should give exactly the matching items

    Examples:
      | filter   | value     |
      | status   | draft     |
      | status   | active    |
      | status   | completed |
      | platform | ios       |
      | platform | android   |
      | platform | web       |

  @sandbox @writes @LIST-13
  Scenario: Lists filter by status and platform together
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Filtered", "platform": "android", "testersRequired": 2, "rewardPerBug": 3}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a GET request to "/v1/campaigns?status=draft&platform=android&limit=100"
    Then the response status should be 200
    And the items at "data.items" should include one with "id" equal to "{campaignId}"
    And every item at "data.items" should have "status" equal to "draft"
    And every item at "data.items" should have "platform" equal to "android"
    When I send a GET request to "/v1/campaigns?platform=ios&limit=100"
    Then no item at "data.items" should have "id" equal to "{campaignId}"

  @sandbox @writes @CMP-9 @CMP-10 @CMP-11 @CMP-12
  Scenario Outline: A campaign at the edge of the bounds is accepted: <case>
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '<body>'
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data.status" should be "draft"
    And the response body should contain "<raw>"

    Examples:
      | case                   | raw                       | body |
      | name of 1 character    | "name":"a"                | {"name": "a", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | name of 200 characters | "testersRequired":1       | {"name": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | name padded with spaces | "name":"  padded  "      | {"name": "  padded  ", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | name of 200 letters é  | "testersRequired":1       | {"name": "éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | platform web           | "platform":"web"          | {"name": "p", "platform": "web", "testersRequired": 1, "rewardPerBug": 1} |
      | platform android       | "platform":"android"      | {"name": "p", "platform": "android", "testersRequired": 1, "rewardPerBug": 1} |
      | 1 tester               | "testersRequired":1       | {"name": "t", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | 10000 testers          | "testersRequired":10000   | {"name": "t", "platform": "ios", "testersRequired": 10000, "rewardPerBug": 1} |
      | a reward of 0          | "rewardPerBug":0          | {"name": "r", "platform": "ios", "testersRequired": 1, "rewardPerBug": 0} |
      | a reward of 100000     | "rewardPerBug":100000     | {"name": "r", "platform": "ios", "testersRequired": 1, "rewardPerBug": 100000} |
      | a reward of 7.50       | "rewardPerBug":7.50       | {"name": "r", "platform": "ios", "testersRequired": 1, "rewardPerBug": 7.50} |
      | a reward of 19.99      | "rewardPerBug":19.99      | {"name": "r", "platform": "ios", "testersRequired": 1, "rewardPerBug": 19.99} |

  @sandbox @writes @CMP-9 @CMP-10 @CMP-11 @CMP-12 @ERR-6
  Scenario Outline: A campaign outside the bounds is 400 VALIDATION_ERROR on <field>: <case>
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '<body>'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "<field>"
    When I send a GET request to "/v1/campaigns?limit=100"
    Then no item at "data.items" should have "name" equal to "Out of bounds"

    Examples:
      | case                    | field           | body |
      | no name                 | name            | {"platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | an empty name           | name            | {"name": "", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | a name of 201           | name            | {"name": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | an unknown platform     | platform        | {"name": "Out of bounds", "platform": "symbian", "testersRequired": 1, "rewardPerBug": 1} |
      | no platform             | platform        | {"name": "Out of bounds", "testersRequired": 1, "rewardPerBug": 1} |
      | 0 testers               | testersRequired | {"name": "Out of bounds", "platform": "ios", "testersRequired": 0, "rewardPerBug": 1} |
      | 10001 testers           | testersRequired | {"name": "Out of bounds", "platform": "ios", "testersRequired": 10001, "rewardPerBug": 1} |
      | 10.0 testers            | testersRequired | {"name": "Out of bounds", "platform": "ios", "testersRequired": 10.0, "rewardPerBug": 1} |
      | testers as a string     | testersRequired | {"name": "Out of bounds", "platform": "ios", "testersRequired": "5", "rewardPerBug": 1} |
      | a negative reward       | rewardPerBug    | {"name": "Out of bounds", "platform": "ios", "testersRequired": 1, "rewardPerBug": -0.01} |
      | a reward over 100000    | rewardPerBug    | {"name": "Out of bounds", "platform": "ios", "testersRequired": 1, "rewardPerBug": 100000.01} |
      | a reward with 3 decimals | rewardPerBug   | {"name": "Out of bounds", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1.234} |
      | no reward               | rewardPerBug    | {"name": "Out of bounds", "platform": "ios", "testersRequired": 1} |
      | a name of 201 letters é | name            | {"name": "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | a name of a tab         | name            | {"name": "\t", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | testers null            | testersRequired | {"name": "Out of bounds", "platform": "ios", "testersRequired": null, "rewardPerBug": 1} |
      | a blank name            | name            | {"name": "   ", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | a platform in capitals  | platform        | {"name": "Out of bounds", "platform": "WEB", "testersRequired": 1, "rewardPerBug": 1} |
      | a capitalised platform  | platform        | {"name": "Out of bounds", "platform": "Ios", "testersRequired": 1, "rewardPerBug": 1} |
      | a platform with a space | platform        | {"name": "Out of bounds", "platform": " android", "testersRequired": 1, "rewardPerBug": 1} |
      | testers as a fraction   | testersRequired | {"name": "Out of bounds", "platform": "ios", "testersRequired": 1.5, "rewardPerBug": 1} |
      | a reward as a string    | rewardPerBug    | {"name": "Out of bounds", "platform": "ios", "testersRequired": 1, "rewardPerBug": "5"} |

  @sandbox @writes @CMP-16 @CMP-14
  Scenario: No request moves a campaign out of draft
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Stays a draft", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1, "status": "active"}'
    Then the response status should be 200
    And the JSON at "data.status" should be "draft"
    And I save the JSON at "data.id" as "campaignId"
    When I send a PATCH request to "/v1/campaigns/{campaignId}" with the body '{"status": "active"}'
    Then the response status should be 405
    When I send a PUT request to "/v1/campaigns/{campaignId}" with the body '{"status": "completed"}'
    Then the response status should be 405
    When I send a GET request to "/v1/campaigns/{campaignId}"
    Then the JSON at "data.status" should be "draft"
    When I send a GET request to "/v1/campaigns?status=active&limit=100"
    Then no item at "data.items" should have "id" equal to "{campaignId}"

  @sandbox @writes @LIST-9
  Scenario: A campaign written between two pages does not shift the next page
    The cursor marks the last item seen: the page after it starts right
    after that item, whatever was written since.

    Given a fresh sandbox account
    When I send 3 POST requests to "/v1/campaigns" with the body '{"name": "Paged around", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns?limit=2"
    And I save the JSON at "data.items.1.id" as "lastSeen"
    And I save the JSON at "data.nextCursor" as "cursor"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Written between pages", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "between"
    And I send a GET request to "/v1/campaigns?limit=2&cursor={cursor}"
    Then the response status should be 200
    And the JSON at "data.items" should have 2 items
    And no item at "data.items" should have "id" equal to "{lastSeen}"
    And no item at "data.items" should have "id" equal to "{between}"
    When I send a GET request to "/v1/campaigns?status=draft&limit=1"
    And I save the JSON at "data.nextCursor" as "cursor"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Written between filtered pages", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/campaigns?status=draft&limit=1&cursor={cursor}"
    Then the response status should be 200
    And the JSON at "data.items" should have 1 item

  @sandbox @writes @ACCT-6
  Scenario Outline: A refused campaign uses no id: <case>
    The model holds the account's sequence of ids: the campaign made after
    the refusal takes the number the refused one would have taken.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Before", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "before"
    And I send a POST request to "/v1/campaigns" with the body '<refused>'
    Then the response should not be successful
    When I send a POST request to "/v1/campaigns" with the body '{"name": "After", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 200
    And the JSON at "data.id" should not equal the saved "before"

    Examples:
      | case              | refused |
      | a field invalid   | {"name": "Refused", "platform": "symbian", "testersRequired": 1, "rewardPerBug": 1} |
      | JSON malformed    | {"name": "Refused", |
      | a blank name      | {"name": " ", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |

  @sandbox @seed @ACCT-7
  Scenario: The oldest seeded campaign is as old as its fixture says, counted from the account's first request
    The built-in fixtures date the checkout campaign 720h (2592000 s)
    before the key's first request, whenever that is.

    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=100"
    And I save the header "Date" as "firstRequest"
    Then the JSON at "data.items.3.name" should be "Checkout flow, iOS 18"
    And the JSON at "data.items.3.createdAt" should be greater than the saved "firstRequest" minus 2592001
    And the JSON at "data.items.3.createdAt" should be less than the saved "firstRequest" minus 2591998

  @sandbox @writes @LIST-8 @LIST-10
  Scenario Outline: Campaigns filtered by <query> are walked page by page without loss or repeat
    Given a fresh sandbox account
    When I send 3 POST requests to "/v1/campaigns" with the body '{"name": "Walked filtered", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then walking "/v1/campaigns?<query>" with limit 2 should give every item once, newest first

    Examples:
      | query                      |
      | status=draft               |
      | platform=web               |
      | status=active              |
      | status=draft&platform=web  |

  @sandbox @ERR-15 @CMP-6
  Scenario Outline: An id that differs from a seeded one only in its spelling is 404: <id>
    An id is matched as written: not by the number it carries, not
    whatever its case, not trimmed.

    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns/<id>"
    Then the response status should be 404
    And the error code should be "NOT_FOUND"

    Examples:
      | id              |
      | CMP_000001      |
      | cmp_1           |
      | cmp_0000001     |
      | cmp_000001%20   |
