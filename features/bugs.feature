@bugs @stable
Feature: Bugs
  Spec §4: GET /v1/bugs lists bug reports with filters and PATCH /v1/bugs/:id
  updates a bug's status or resolution. Fields, filters and transitions are
  not shown in the spec, so beyond the envelope everything here is the
  sandbox's documented lifecycle: new → confirmed | closed; confirmed →
  in_progress | resolved | closed; in_progress → resolved | closed; resolved
  → closed | confirmed; closed → confirmed. Moving to resolved or closed needs
  a resolution; reopening clears it. Each scenario starts from a fresh,
  seeded sandbox account, which holds bugs in every status.

  @must
  Scenario: Listing bugs succeeds
    When I send a GET request to "/v1/bugs"
    Then the response status should be 200
    And the response should be a success envelope

  @sandbox
  Scenario: A fresh account holds bugs with the documented fields
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs"
    Then the response status should be 200
    And the JSON at "data.items" should have at least 5 items
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
    And the JSON at "data.items.0.id" should start with "bug_"
    And the items at "data.items" should be ordered by "createdAt" descending

  @sandbox
  Scenario Outline: Bugs filter by <filter>
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?<filter>=<value>"
    Then the response status should be 200
    And the JSON at "data.items" should have at least 1 item
    And every item at "data.items" should have "<filter>" equal to "<value>"

    Examples:
      | filter   | value       |
      | status   | new         |
      | status   | confirmed   |
      | status   | in_progress |
      | status   | resolved    |
      | status   | closed      |

  @sandbox
  Scenario: Bugs filter by campaign, severity and tester
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?limit=1"
    And I save the JSON at "data.items.0.campaignId" as "campaignId"
    And I save the JSON at "data.items.0.testerId" as "testerId"
    And I save the JSON at "data.items.0.severity" as "severity"
    And I send a GET request to "/v1/bugs?campaignId={campaignId}&testerId={testerId}&severity={severity}"
    Then the response status should be 200
    And the JSON at "data.items" should have at least 1 item
    And every item at "data.items" should have "campaignId" equal to "{campaignId}"
    And every item at "data.items" should have "testerId" equal to "{testerId}"
    And every item at "data.items" should have "severity" equal to "{severity}"

  @sandbox
  Scenario Outline: A bad bug filter is 400 INVALID_PARAMETER: <query>
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?<query>"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query           |
      | status=open     |
      | severity=urgent |
      | limit=-1        |

  @sandbox @writes
  Scenario Outline: A bug moves from <from> to <to>
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=<from>&limit=1"
    And I save the JSON at "data.items.0.id" as "bugId"
    And I send a PATCH request to "/v1/bugs/{bugId}" with the body '<body>'
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
      | resolved    | confirmed   | {"status": "confirmed"}                           | null               |
      | closed      | confirmed   | {"status": "confirmed"}                           | null               |

  @sandbox @writes
  Scenario: Closing a resolved bug keeps its resolution
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=resolved&limit=1"
    And I save the JSON at "data.items.0.id" as "bugId"
    And I save the JSON at "data.items.0.resolution" as "resolution"
    And I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": "closed"}'
    Then the response status should be 200
    And the JSON at "data.status" should be "closed"
    And the JSON at "data.resolution" should equal the saved "resolution"
    And the JSON at "data.resolution" should be a string

  @sandbox @writes
  Scenario Outline: A bug cannot move from <from> with <body>
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=<from>&limit=1"
    And I save the JSON at "data.items.0.id" as "bugId"
    And I send a PATCH request to "/v1/bugs/{bugId}" with the body '<body>'
    Then the response status should be 409
    And the response should be an error envelope
    And the error code should be "INVALID_STATUS_TRANSITION"
    When I send a GET request to "/v1/bugs?status=<from>&limit=100"
    Then the items at "data.items" should include one with "id" equal to "{bugId}"

    Examples:
      | from        | body                                           |
      | new         | {"status": "in_progress"}                      |
      | new         | {"status": "resolved", "resolution": "fixed"}  |
      | confirmed   | {"status": "new"}                              |
      | confirmed   | {"status": "resolved"}                         |
      | confirmed   | {"resolution": "fixed"}                        |
      | in_progress | {"status": "confirmed"}                        |
      | resolved    | {"status": "in_progress"}                      |
      | closed      | {"status": "resolved", "resolution": "fixed"}  |
      | closed      | {"status": "new"}                              |

  @sandbox @writes
  Scenario Outline: An unknown <field> value is 400 VALIDATION_ERROR
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs?status=confirmed&limit=1"
    And I save the JSON at "data.items.0.id" as "bugId"
    And I send a PATCH request to "/v1/bugs/{bugId}" with the body '<body>'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "<field>"

    Examples:
      | field      | body                                            |
      | status     | {"status": "done"}                              |
      | resolution | {"status": "resolved", "resolution": "magic"}   |

  @sandbox @writes
  Scenario: A tester files a bug, which is new and listed first
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=1"
    And I save the JSON at "data.items.0.id" as "campaignId"
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
