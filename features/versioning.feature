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
