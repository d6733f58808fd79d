@bugs @stable
Feature: Bugs
  Spec §4: GET /v1/bugs lists bug reports with filters and PATCH /v1/bugs/:id
  updates a bug's status or resolution. Fields, filters and transitions are
  not shown in the spec, so beyond the envelope everything here is the
  sandbox's documented lifecycle: new → confirmed | closed; confirmed →
  in_progress | resolved | closed; in_progress → resolved | closed; resolved
  → closed | confirmed; closed → confirmed. Moving to resolved or closed needs
  a resolution; reopening clears it. Each scenario makes the bugs it needs
  through the API and /_sandbox/bugs in a fresh account, so the checks hold
  whatever the account was seeded with; checks of the built-in seed are
  tagged @seed.

  @must @BUG-1
  Scenario: Listing bugs succeeds
    When I send a GET request to "/v1/bugs"
    Then the response status should be 200
    And the response should be a success envelope

  @must @writes @BUG-3
  Scenario: A bug's status changes to a value its data shows
    The spec names no status values and no body fields, so the kit takes
    both from the deployment: a bug's "status" goes to a value another
    listed bug shows (its own when all show one), tried in turn until one
    is accepted. A deployment that accepts none is not judged.

    When I change the "status" of a record listed at "/v1/bugs" to a value its data shows, saving its id as "bugId" and the value as "newStatus"
    Then the response status should be 200
    And the response should be a success envelope
    And the rate-limit headers should be present as integers
    When I send a GET request to "/v1/bugs"
    Then the record with id "{bugId}" in the answer should have "status" equal to "{newStatus}"

  @sandbox @seed @BUG-4 @BUG-5 @ACCT-3 @ACCT-7
  Scenario: A fresh account holds the seeded bugs with the documented fields
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs"
    Then the response status should be 200
    And the JSON at "data.items" should have 9 items
    And the JSON at "data.items.0" should match:
      """
      {
        "id": "<id>",
        "campaignId": "<id>",
        "testerId": "<id>",
        "title": "<string>",
        "description": "<string>",
        "severity": "<string>",
        "status": "<string>",
        "resolution": "<string|null>",
        "createdAt": "<timestamp>",
        "updatedAt": "<timestamp>"
      }
      """
    And the items at "data.items" should be ordered by "createdAt" descending

  @sandbox @seed @ACCT-3 @BUG-5
  Scenario Outline: The seed holds bugs in status <status>
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=<status>"
    Then the JSON at "data.items" should have at least 1 item
    And every item at "data.items" should have "status" equal to "<status>"

    Examples:
      | status      |
      | new         |
      | confirmed   |
      | in_progress |
      | resolved    |
      | closed      |

  @sandbox @writes @BUG-4 @CTL-4 @CTL-5
  Scenario: A filed bug has the documented fields and timestamps
    Given a fresh sandbox account
    And a bug with status "new"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    Then the response status should be 200
    And the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0" should match:
      """
      {
        "id": "{bugId}",
        "campaignId": "{campaignId}",
        "testerId": "{testerId}",
        "title": "Lifecycle check",
        "description": "<string>",
        "severity": "high",
        "status": "new",
        "resolution": null,
        "createdAt": "<timestamp>",
        "updatedAt": "<timestamp>"
      }
      """
    And the JSON at "data.items.0.id" should start with "bug_"

  @sandbox @writes @ENV-11
  Scenario: Bug timestamps are RFC 3339 in UTC with milliseconds
    Given a fresh sandbox account
    And a bug with status "resolved"
    When I send a GET request to "/v1/bugs?limit=100"
    Then every timestamp in the response should be in UTC with milliseconds

  @sandbox @writes @BUG-2 @BUG-6 @LIST-10
  Scenario Outline: Bugs filter by <filter> alone, exactly
    Every bug of the unfiltered list with that value comes back, in order,
    and no other.

    Given a fresh sandbox account
    And a bug with status "<status>"
    Then filtering by "<filter>" = "<value>" on "/v1/bugs" should give exactly the matching items
    And the items at "items" should include one with "id" equal to "{bugId}"

    Examples:
      | filter     | value        | status      |
      | status     | new          | new         |
      | status     | confirmed    | confirmed   |
      | status     | in_progress  | in_progress |
      | status     | resolved     | resolved    |
      | status     | closed       | closed      |
      | severity   | high         | new         |
      | campaignId | {campaignId} | new         |
      | testerId   | {testerId}   | new         |

  @sandbox @writes @BUG-6 @LIST-10
  Scenario Outline: Bugs filter by severity <severity> alone, exactly
    Given a fresh sandbox account
    And a bug with status "new"
    Then filtering by "severity" = "<severity>" on "/v1/bugs" should give exactly the matching items

    Examples:
      | severity |
      | low      |
      | medium   |
      | critical |

  @sandbox @writes @LIST-10 @LIST-12
  Scenario: A filter excludes the bugs that do not match
    Given a fresh sandbox account
    And a bug with status "closed"
    When I send a GET request to "/v1/bugs?status=new&limit=100"
    Then no item at "data.items" should have "id" equal to "{bugId}"
    And no item at "data.items" should have "status" equal to "closed"

  @sandbox @writes @LIST-13
  Scenario: Bugs filters combine
    Given a fresh sandbox account
    And a bug with status "new"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}&testerId={testerId}&severity=high&status=new"
    Then the response status should be 200
    And the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should equal the saved "bugId"

  @sandbox @writes @LIST-8
  Scenario: Bugs are walked page by page without loss or repeat
    Given a fresh sandbox account
    And a bug with status "new"
    And a bug with status "confirmed"
    And a bug with status "closed"
    Then walking "/v1/bugs" with limit 2 should give every item once, newest first
    And the JSON at "items" should have at least 3 items
    And the items at "items" should include one with "id" equal to "{bugId}"

  @sandbox @LIST-11
  Scenario Outline: A bad bug filter is 400 INVALID_PARAMETER: <query>
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?<query>"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query              |
      | status=open        |
      | status=NEW         |
      | status=Closed      |
      | status=in-progress |
      | severity=urgent    |
      | severity=HIGH      |
      | severity=high%20   |
      | limit=-1           |
      | limit=0            |
      | limit=101          |
      | cursor=bogus       |

  @sandbox @writes @BUG-3 @BUG-8 @BUG-9 @BUG-10 @BUG-11 @BUG-12 @BUG-14 @BUG-15
  Scenario Outline: A bug moves from <from> to <to>
    Given a fresh sandbox account
    And a bug with status "<from>"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '<body>'
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data.id" should equal the saved "bugId"
    And the JSON at "data.status" should be "<to>"
    And the JSON at "data.resolution" should equal <resolution>
    And the JSON at "data.updatedAt" should be a timestamp

    Examples:
      | from        | to          | body                                              | resolution         |
      | new         | confirmed   | {"status": "confirmed"}                           | null               |
      | new         | closed      | {"status": "closed", "resolution": "wont_fix"}    | "wont_fix"         |
      | confirmed   | in_progress | {"status": "in_progress"}                         | null               |
      | confirmed   | resolved    | {"status": "resolved", "resolution": "fixed"}     | "fixed"            |
      | confirmed   | closed      | {"status": "closed", "resolution": "duplicate"}   | "duplicate"        |
      | in_progress | resolved    | {"status": "resolved", "resolution": "fixed"}     | "fixed"            |
      | in_progress | closed      | {"status": "closed", "resolution": "not_a_bug"}   | "not_a_bug"        |
      | resolved    | closed      | {"status": "closed"}                              | "fixed"            |
      | resolved    | confirmed   | {"status": "confirmed"}                           | null               |
      | closed      | confirmed   | {"status": "confirmed"}                           | null               |

  @sandbox @writes @BUG-13
  Scenario Outline: Every resolution is accepted: <resolution>
    Given a fresh sandbox account
    And a bug with status "confirmed"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "resolved", "resolution": "<resolution>"}'
    Then the response status should be 200
    And the JSON at "data.resolution" should be "<resolution>"

    Examples:
      | resolution       |
      | fixed            |
      | wont_fix         |
      | duplicate        |
      | cannot_reproduce |
      | not_a_bug        |

  @sandbox @writes @BUG-18 @BUG-14 @BUG-15 @BUG-16
  Scenario Outline: A bug cannot move from <from> with <body>
    Given a fresh sandbox account
    And a bug with status "<from>"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '<body>'
    Then the response status should be 409
    And the response should be an error envelope
    And the error code should be "INVALID_STATUS_TRANSITION"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    Then the JSON at "data.items.0.status" should be "<from>"

    Examples:
      | from        | body                                           |
      | new         | {"status": "in_progress"}                      |
      | new         | {"status": "resolved", "resolution": "fixed"}  |
      | new         | {"status": "closed"}                           |
      | confirmed   | {"status": "new"}                              |
      | confirmed   | {"status": "resolved"}                         |
      | confirmed   | {"resolution": "fixed"}                        |
      | new         | {"resolution": "duplicate"}                    |
      | in_progress | {"resolution": "wont_fix"}                     |
      | confirmed   | {"status": "in_progress", "resolution": "fixed"} |
      | resolved    | {"status": "confirmed", "resolution": "fixed"} |
      | closed      | {"status": "confirmed", "resolution": "duplicate"} |
      | in_progress | {"status": "confirmed"}                        |
      | in_progress | {"status": "new"}                              |
      | resolved    | {"status": "in_progress"}                      |
      | resolved    | {"status": "new"}                              |
      | closed      | {"status": "resolved", "resolution": "fixed"}  |
      | closed      | {"status": "in_progress"}                      |
      | closed      | {"status": "new"}                              |

  @sandbox @writes @BUG-19
  Scenario Outline: An unknown <field> value is 400 VALIDATION_ERROR
    Given a fresh sandbox account
    And a bug with status "confirmed"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '<body>'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "<field>"

    Examples:
      | field      | body                                            |
      | status     | {"status": "done"}                              |
      | resolution | {"status": "resolved", "resolution": "magic"}   |
      | status     | {"status": "CONFIRMED"}                         |
      | status     | {"status": "In_progress"}                       |
      | status     | {"status": " resolved", "resolution": "fixed"}  |
      | status     | {"status": 2}                                   |
      | status     | {"status": "in-progress"}                       |
      | resolution | {"status": "resolved", "resolution": "FIXED"}   |
      | resolution | {"status": "closed", "resolution": "wont fix"}  |

  @sandbox @writes @CTL-4 @LIST-2 @BUG-1
  Scenario: A tester files a bug, which is new and listed first
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Filed", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    And I send a POST request to "/_sandbox/bugs" with JSON:
      """
      {"campaignId": "{campaignId}", "title": "Crash on login", "description": "Tapping login crashes the app", "severity": "high"}
      """
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {
        "id": "<id>",
        "campaignId": "{campaignId}",
        "title": "Crash on login",
        "severity": "high",
        "status": "new",
        "resolution": null,
        "createdAt": "<timestamp>"
      }
      """
    When I save the JSON at "data.id" as "bugId"
    And I send a GET request to "/v1/bugs"
    Then the JSON at "data.items.0.id" should equal the saved "bugId"

  @sandbox @writes @ACCT-1 @ACCT-2
  Scenario: Another account's bug is 404 NOT_FOUND, and listed nowhere
    Given a fresh sandbox account
    And a bug with status "new"
    And a fresh sandbox account
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "confirmed"}'
    Then the response status should be 404
    And the error code should be "NOT_FOUND"
    When I send a GET request to "/v1/bugs?limit=100"
    Then no item at "data.items" should have "id" equal to "{bugId}"
    When I send a GET request to "/v1/analytics?campaignId={campaignId}"
    Then the response status should be 404

  @sandbox @writes @ACCT-5
  Scenario: The same requests give the same bug ids in every fresh account
    Given a fresh sandbox account
    And a bug with status "new"
    And I save the JSON at "data.id" as "firstAccountBug"
    And a fresh sandbox account
    And a bug with status "new"
    Then the JSON at "data.id" should equal the saved "firstAccountBug"

  @sandbox @writes @BUG-7
  Scenario: A change that names neither status nor resolution is refused, and the bug is unchanged
    Given a fresh sandbox account
    And a bug with status "confirmed"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"severity": "low"}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    Then the JSON at "data.items.0.status" should be "confirmed"

  @sandbox @writes @BUG-17 @BUG-16
  Scenario Outline: A <status> bug changes its resolution without moving
    Given a fresh sandbox account
    And a bug with status "<status>"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"resolution": "duplicate"}'
    Then the response status should be 200
    And the JSON at "data.status" should be "<status>"
    And the JSON at "data.resolution" should be "duplicate"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    Then the JSON at "data.items.0.resolution" should be "duplicate"

    Examples:
      | status   |
      | resolved |
      | closed   |

  @sandbox @writes @LIST-12
  Scenario Outline: A <filter> filter naming no record of the account gives an empty list
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?<filter>=<value>"
    Then the response status should be 200
    And the JSON at "data.items" should have 0 items
    And the JSON at "data.hasMore" should equal false

    Examples:
      | filter     | value                |
      | campaignId | cmp_conform_no_such  |
      | testerId   | tst_conform_no_such  |
      | campaignId | CMP_000001           |
      | campaignId | cmp_000001%20        |
      | campaignId | %20cmp_000001        |
      | testerId   | TST_000001           |

  @sandbox @writes @LIST-9
  Scenario: A bug filed between two pages does not shift the next page
    Given a fresh sandbox account
    And a bug with status "new"
    When I send a GET request to "/v1/bugs?limit=1"
    And I save the JSON at "data.items.0.id" as "lastSeen"
    And I save the JSON at "data.nextCursor" as "cursor"
    And a bug with status "new"
    And I send a GET request to "/v1/bugs?limit=1&cursor={cursor}"
    Then the response status should be 200
    And the JSON at "data.items" should have 1 item
    And no item at "data.items" should have "id" equal to "{lastSeen}"
    And no item at "data.items" should have "id" equal to "{bugId}"

  @sandbox @writes @BUG-20
  Scenario Outline: Sending a <status> bug its own status changes nothing
    Given a fresh sandbox account
    And a bug with status "<status>"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    And I save the JSON at "data.items.0.updatedAt" as "updatedAt"
    And I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "<status>"}'
    Then the response status should be 200
    And the JSON at "data.status" should be "<status>"
    And the JSON at "data.updatedAt" should equal the saved "updatedAt"

    Examples:
      | status      |
      | new         |
      | in_progress |
      | closed      |

  @sandbox @writes @LIST-8 @LIST-10
  Scenario Outline: Bugs filtered by <query> are walked page by page without loss or repeat
    Given a fresh sandbox account
    And a bug with status "new"
    And a bug with status "closed"
    Then walking "/v1/bugs?<query>" with limit 1 should give every item once, newest first

    Examples:
      | query                         |
      | status=new                    |
      | status=closed                 |
      | severity=high                 |
      | campaignId={campaignId}       |
      | status=closed&severity=high   |

  @sandbox @writes @ERR-15
  Scenario Outline: A bug id that differs from a seeded one only in its spelling is 404: <id>
    Given a fresh sandbox account
    When I send a PATCH request to "/v1/bugs/<id>" with the body '{"status": "confirmed"}'
    Then the response status should be 404
    And the error code should be "NOT_FOUND"

    Examples:
      | id          |
      | BUG_000001  |
      | bug_1       |
