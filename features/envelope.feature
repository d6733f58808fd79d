@envelope
Feature: Response envelope
  Spec §4 "Response envelope": a success is an object with "success" = true
  (a boolean) and "data" (an object holding the result); a failure is an object
  with "success" = false and "error" (spec §7). The rule holds on every
  endpoint, so each outline below runs once per endpoint of the endpoint table.

  @must @ENV-1
  Scenario Outline: <method> <path> answers in the envelope
    The requests are chosen so that they never create or change data: bodies
    are deliberately malformed JSON and ids do not exist. Whatever the status,
    the body must be the envelope that matches it.

    When I send a <method> request to "<path>" with the body '<body>'
    Then the response should be an envelope

    @stable
    Examples: stable endpoints
      | method | path                                | body               |
      | GET    | /v1/campaigns                       |                    |
      | POST   | /v1/campaigns                       | {"conformance": ,} |
      | GET    | /v1/campaigns/cmp_conform_no_such   |                    |
      | GET    | /v1/bugs                            |                    |
      | PATCH  | /v1/bugs/bug_conform_no_such        | {"conformance": ,} |
      | POST   | /v1/webhooks                        | {"conformance": ,} |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @must @ENV-2
  Scenario Outline: GET <path> succeeds with data as an object
    When I send a GET request to "<path>"
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "success" should equal true
    And the JSON at "data" should be an object
    And the JSON at "error" should not exist

    @stable
    Examples: stable endpoints
      | path          |
      | /v1/campaigns |
      | /v1/bugs      |

    @beta
    Examples: beta endpoints
      | path          |
      | /v1/testers   |
      | /v1/analytics |

  @must @stable @ENV-3 @ENV-7
  Scenario: A refused request answers with the error envelope
    Given I use the API key "not_a_valid_key"
    When I send a GET request to "/v1/campaigns"
    Then the response should be an error envelope
    And the JSON at "success" should equal false
    And the JSON at "data" should not exist

  @must @ENV-8
  Scenario Outline: <method> <path> answers with a JSON content type
    The spec describes a JSON API; a client decoding the envelope relies on
    the response saying so (Content-Type: application/json).

    When I send a <method> request to "<path>" with the body '<body>'
    Then the response should be JSON

    @stable
    Examples: stable endpoints
      | method | path                              | body               |
      | GET    | /v1/campaigns                     |                    |
      | POST   | /v1/campaigns                     | {"conformance": ,} |
      | GET    | /v1/campaigns/cmp_conform_no_such |                    |
      | GET    | /v1/bugs                          |                    |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {"conformance": ,} |
      | POST   | /v1/webhooks                      | {"conformance": ,} |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @must @stable @ENV-8
  Scenario: Errors answer with a JSON content type
    Given I am not authenticated
    When I send a GET request to "/v1/campaigns"
    Then the response should be JSON

  @sandbox @stable @ENV-9
  Scenario: Unknown routes answer in the envelope with a JSON content type
    When I send a GET request to "/v1/no-such-route"
    Then the response status should be 404
    And the response should be JSON
    And the response should be an error envelope
