@auth
Feature: Authentication
  Spec §5: every request carries "Authorization: Bearer <API_KEY>"; an invalid
  or expired key is rejected with status 401 and error code INVALID_API_KEY.
  Spec §4: all endpoints require authentication. Auth is checked before
  anything else, so the ids and bodies below are placeholders that are never
  looked at and nothing is created.

  @must @AUTH-1
  Scenario Outline: <method> <path> refuses a request without credentials
    The spec does not say which status a missing header gets (§5.6: "not
    shown"), only that every endpoint requires authentication. 400, 401 and
    403 are all reasonable readings; a success is not.

    Given I am not authenticated
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response should not be successful
    And the response status should be one of "400, 401, 403"
    And the response should be an error envelope

    @stable
    Examples: stable endpoints
      | method | path                              | body |
      | GET    | /v1/campaigns                     |      |
      | POST   | /v1/campaigns                     | {}   |
      | GET    | /v1/campaigns/cmp_conform_no_such |      |
      | GET    | /v1/bugs                          |      |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {}   |
      | POST   | /v1/webhooks                      | {}   |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @must @AUTH-3 @ENV-6
  Scenario Outline: <method> <path> rejects an invalid key with 401 INVALID_API_KEY
    Given I use the API key "svc_conform_invalid_{random}"
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response status should be 401
    And the response should be an error envelope
    And the error code should be "INVALID_API_KEY"
    And the JSON at "error.status" should equal 401

    @stable
    Examples: stable endpoints
      | method | path                              | body |
      | GET    | /v1/campaigns                     |      |
      | POST   | /v1/campaigns                     | {}   |
      | GET    | /v1/campaigns/cmp_conform_no_such |      |
      | GET    | /v1/bugs                          |      |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {}   |
      | POST   | /v1/webhooks                      | {}   |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @must @stable @AUTH-2
  Scenario: The configured key is accepted as a Bearer token
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the response should be a success envelope

  @should @AUTH-5
  Scenario Outline: A 401 from <method> <path> names the Bearer scheme in WWW-Authenticate
    HTTP (RFC 9110 §11.6.1) requires a 401 to carry WWW-Authenticate naming
    the scheme the client should use; the spec uses Bearer.

    Given I use the API key "svc_conform_invalid_{random}"
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response status should be 401
    And the header "WWW-Authenticate" should contain "Bearer"

    @stable
    Examples: stable endpoints
      | method | path                              | body |
      | GET    | /v1/campaigns                     |      |
      | POST   | /v1/campaigns                     | {}   |
      | GET    | /v1/campaigns/cmp_conform_no_such |      |
      | GET    | /v1/bugs                          |      |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {}   |
      | POST   | /v1/webhooks                      | {}   |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @sandbox @AUTH-4 @AUTH-13
  Scenario Outline: <method> <path> refuses an expired test key with 401 INVALID_API_KEY
    Given I use the API key "svc_test_expired{random}"
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response status should be 401
    And the error code should be "INVALID_API_KEY"

    @stable
    Examples: stable endpoints
      | method | path                              | body |
      | GET    | /v1/campaigns                     |      |
      | POST   | /v1/campaigns                     | {}   |
      | GET    | /v1/campaigns/cmp_conform_no_such |      |
      | GET    | /v1/bugs                          |      |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {}   |
      | POST   | /v1/webhooks                      | {}   |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @should @stable @AUTH-9
  Scenario: The scheme word is case-insensitive
    HTTP auth schemes are case-insensitive (RFC 9110 §11.1), so "bearer"
    must work like "Bearer".

    Given I use the Authorization header "bearer {key}"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the response should be a success envelope

  @sandbox @stable @AUTH-9
  Scenario Outline: The scheme word is matched in any case: <scheme>
    Given I use the Authorization header "<scheme> {key}"
    When I send a <method> request to "<path>"
    Then the response status should be 200
    And the response should be a success envelope

    Examples:
      | scheme | method | path          |
      | bearer | GET    | /v1/bugs      |
      | BEARER | GET    | /v1/campaigns |
      | BeArEr | GET    | /v1/testers   |
      | bEARER | GET    | /v1/analytics |

  @must @stable @AUTH-1
  Scenario: A key sent without the Bearer scheme is not accepted
    Spec §5: every request carries "Authorization: Bearer <API_KEY>". A
    deployment that takes the bare key lets a client that forgot the
    scheme work against it and fail against every other.

    Given I use the Authorization header "{key}"
    When I send a GET request to "/v1/campaigns"
    Then the response should not be successful
    And the response should be an error envelope

  @should @stable @AUTH-8
  Scenario: A key sent with another scheme is not accepted
    Given I use the Authorization header "Basic {key}"
    When I send a GET request to "/v1/campaigns"
    Then the response should not be successful
    And the response should be an error envelope

  @sandbox @stable @AUTH-11 @AUTH-14 @AUTH-5
  Scenario Outline: The sandbox refuses <case> with 401 INVALID_API_KEY, saying why
    The message names the problem in a word a reader looks for (AUTH-14).

    Given I use the Authorization header "<header>"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 401
    And the response should be an error envelope
    And the error code should be "INVALID_API_KEY"
    And the header "WWW-Authenticate" should contain "Bearer"
    And the JSON at "error.message" should match the pattern "(?i)<says>"

    @AUTH-8
    Examples: another scheme
      | case                     | header                                | says      |
      | another scheme           | Basic {key}                           | scheme    |
      | a Token scheme           | Token {key}                           | scheme    |

    Examples: the key
      | case                     | header                                | says      |
      | an empty key             | Bearer                                | empty     |
      | an unknown prefix        | Bearer sk_test_{random}               | prefix    |
      | an upper-case prefix     | Bearer SVC_TEST_{random}              | prefix    |
      | an empty secret          | Bearer svc_test_                      | malformed |
      | a secret with bad chars  | Bearer svc_test_has*star              | malformed |
      | an expired key           | Bearer svc_test_expired{random}       | expired   |
      | a live key               | Bearer svc_live_{random}              | live      |

  @sandbox @stable @AUTH-14 @AUTH-7
  Scenario: The sandbox says that the Authorization header is missing
    Given I am not authenticated
    When I send a GET request to "/v1/bugs"
    Then the response status should be 401
    And the error code should be "INVALID_API_KEY"
    And the JSON at "error.message" should match the pattern "(?i)missing"

  @sandbox @stable @AUTH-15 @AUTH-7
  Scenario Outline: Authentication comes before routing: <method> <path> without a key is 401
    Given I am not authenticated
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response status should be 401
    And the response should be an error envelope
    And the error code should be "INVALID_API_KEY"
    And the header "WWW-Authenticate" should contain "Bearer"

    Examples:
      | method | path                      | body |
      | GET    | /v1/conform-no-such-route |      |
      | GET    | /v1/campaigns/            |      |
      | DELETE | /v1/campaigns             |      |
      | POST   | /v1/bugs                  | {}   |
      | GET    | /v1                       |      |
      | GET    | /_sandbox/no-such-control |      |
      | GET    | /_sandbox/events          |      |

  @sandbox @AUTH-7 @AUTH-15 @RATE-8 @AUTH-5
  Scenario Outline: The sandbox refuses <method> <path> without a header with 401 INVALID_API_KEY
    Given I am not authenticated
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response status should be 401
    And the error code should be "INVALID_API_KEY"
    And the header "WWW-Authenticate" should contain "Bearer"
    And the header "X-RateLimit-Limit" should be absent

    @stable
    Examples: stable endpoints
      | method | path                              | body |
      | GET    | /v1/campaigns                     |      |
      | POST   | /v1/campaigns                     | {}   |
      | GET    | /v1/campaigns/cmp_conform_no_such |      |
      | GET    | /v1/bugs                          |      |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {}   |
      | POST   | /v1/webhooks                      | {}   |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @sandbox @AUTH-12 @AUTH-6 @AUTH-5
  Scenario Outline: The sandbox refuses a live key on <method> <path>, without echoing it
    Given I save "svc_live_{random}{random}" as "liveKey"
    And I use the API key "{liveKey}"
    When I send a <method> request to "<path>" with the body '<body>'
    Then the response status should be 401
    And the error code should be "INVALID_API_KEY"
    And the header "WWW-Authenticate" should contain "Bearer"
    And the response body should not contain "{liveKey}"

    @stable
    Examples: stable endpoints
      | method | path                              | body |
      | GET    | /v1/campaigns                     |      |
      | POST   | /v1/campaigns                     | {}   |
      | GET    | /v1/campaigns/cmp_conform_no_such |      |
      | GET    | /v1/bugs                          |      |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {}   |
      | POST   | /v1/webhooks                      | {}   |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @sandbox @stable @AUTH-10 @AUTH-11
  Scenario Outline: A secret of <length> characters is <verdict>
    Given I use the API key "<key>"
    When I send a GET request to "/v1/testers"
    Then the response status should be <status>

    Examples:
      | length | verdict  | status | key |
      | 1      | accepted | 200    | svc_test_a |
      | 128    | accepted | 200    | svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-_abc123 |
      | 129    | refused  | 401    | svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-_abc123 |

  @sandbox @stable @AUTH-10 @AUTH-13
  Scenario: Only a secret that starts with "expired", in that case, is expired
    Given I use the API key "svc_test_Expired{random}"
    When I send a GET request to "/v1/testers"
    Then the response status should be 200

  @sandbox @stable @AUTH-12 @AUTH-14 @AUTH-6
  Scenario: The sandbox says why it refuses a live key, without echoing it
    Given I save "svc_live_{random}{random}" as "liveKey"
    And I use the API key "{liveKey}"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 401
    And the JSON at "error.message" should be a string
    And the response body should not contain "{liveKey}"

  @sandbox @stable @writes @ACCT-1
  Scenario: Each test key is its own account
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Private", "platform": "web", "testersRequired": 2, "rewardPerBug": 5}
      """
    And I save the JSON at "data.id" as "campaignId"
    And a fresh sandbox account
    And I send a GET request to "/v1/campaigns/{campaignId}"
    Then the response status should be 404
    And the error code should be "NOT_FOUND"
