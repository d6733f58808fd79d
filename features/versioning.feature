@versioning
Feature: Versioning
  Spec §9: the current version is v1, selected by the "/v1" path prefix, and
  every endpoint carries a maturity label (stable or beta). Deprecation and
  later versions are not shown, so only the prefix is checked.

  @must @stable @ROUTE-1
  Scenario Outline: The version prefix is not optional: <path>
    A deployment that serves the API without (or under another) prefix
    makes "/v1" meaningless. Any refusal status is accepted.

    When I send a GET request to "<path>"
    Then the response should not be successful

    Examples:
      | path          |
      | /campaigns    |
      | /v2/campaigns |
      | /v0/campaigns |

  @must @stable @ROUTE-1
  Scenario: The /v1 prefix selects the API
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the response should be a success envelope

  @sandbox @stable @ROUTE-2
  Scenario Outline: Paths outside /v1 are 404 NOT_FOUND in the envelope: <path>
    When I send a GET request to "<path>"
    Then the response status should be 404
    And the response should be an error envelope
    And the error code should be "NOT_FOUND"

    Examples:
      | path          |
      | /campaigns    |
      | /v2/campaigns |

  @sandbox @stable @ROUTE-2 @ERR-16
  Scenario Outline: A path is matched in its own case: <path> is an unknown route
    When I send a GET request to "<path>"
    Then the response status should be 404
    And the response should be an error envelope
    And the error code should be "NOT_FOUND"

    Examples:
      | path          |
      | /V1/campaigns |
      | /v1/Campaigns |
      | /v1/BUGS      |

  @sandbox @stable @ROUTE-4
  Scenario Outline: A path that is not clean is an unknown route, never a redirect: <path>
    When I send a GET request to "<path>"
    Then the response status should be 404
    And the response should be an error envelope
    And the error code should be "NOT_FOUND"

    Examples:
      | path                  |
      | //v1/campaigns        |
      | /v1//campaigns        |
      | /v1/bugs/.            |

  @sandbox @stable @ROUTE-3
  Scenario Outline: A path with a trailing slash is an unknown route: <method> <path>
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response status should be 404
    And the response should be an error envelope
    And the error code should be "NOT_FOUND"

    Examples:
      | method | path                               | body |
      | GET    | /v1/campaigns/                     |      |
      | POST   | /v1/campaigns/                     | {}   |
      | GET    | /v1/bugs/                          |      |
      | GET    | /v1/testers/                       |      |
      | GET    | /v1/analytics/                     |      |
      | POST   | /v1/webhooks/                      | {}   |
      | GET    | /v1/                               |      |
      | GET    | /v1/campaigns/cmp_000001/          |      |
      | PATCH  | /v1/bugs/bug_000001/               | {}   |

  @sandbox @stable @ROUTE-5
  Scenario Outline: HEAD <path> is answered as GET is, without a body
    When I send a HEAD request to "<path>"
    Then the response status should be <status>
    And the header "Content-Type" should be "application/json"
    And the rate-limit headers should be present as integers

    Examples:
      | path                              | status |
      | /v1/campaigns                     | 200    |
      | /v1/bugs?status=new               | 200    |
      | /v1/testers                       | 200    |
      | /v1/analytics                     | 200    |
      | /v1/campaigns/cmp_conform_no_such | 404    |

  @sandbox @stable @ROUTE-6
  Scenario: GET /healthz needs no key and says how the sandbox is
    Given I am not authenticated
    When I send a GET request to "/healthz"
    Then the response status should be 200
    And the JSON at "data.status" should be "ok"
    And the JSON at "data.accounts" should be an integer
    And the JSON at "data.goroutines" should be an integer

  @sandbox @stable @ROUTE-7
  Scenario: GET /openapi.json needs no key and serves the OpenAPI document, not an envelope
    Given I am not authenticated
    When I send a GET request to "/openapi.json"
    Then the response status should be 200
    And the header "X-RateLimit-Limit" should be absent
    And the JSON at "openapi" should start with "3."
    And the JSON at "success" should not exist

  @sandbox @stable @ROUTE-7
  Scenario: GET /openapi.yaml needs no key and serves the OpenAPI document
    Given I am not authenticated
    When I send a GET request to "/openapi.yaml"
    Then the response status should be 200
    And the header "X-RateLimit-Limit" should be absent
    And the response body should contain "openapi: "
