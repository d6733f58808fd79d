@errors
Feature: Errors
  Spec §7: errors use standard HTTP status codes; a failure body carries
  "success" = false and "error" with "code" (string), "message" (string) and
  "status" (integer, the HTTP status repeated). Which conditions yield 400 or
  500 is not shown, so the status checks below are @should: plain HTTP
  semantics. The exact codes are the sandbox's and run only in its profile.

  @must @stable @ENV-4 @ENV-5 @ENV-6
  Scenario: An error repeats its HTTP status and carries a code and a message
    Given I use the API key "svc_conform_invalid_{random}"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 401
    And the JSON at "error" should match:
      """
      {"code": "INVALID_API_KEY", "message": "<string>", "status": 401}
      """
    And the JSON at "error.status" should be an integer

  @should @stable @ERR-1
  Scenario: Malformed JSON is a client error, not a server error
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Broken",'
    Then the response status should be 400
    And the response should be an error envelope

  @should @stable @writes @ERR-2
  Scenario: An unknown campaign id is 404
    The unknown id has the form of one the deployment made, and the body
    of the PATCH below a value its own data shows, so that a deployment
    that checks ids or bodies first answers for the id.

    Given I save "Unknown id {random}" as "name"
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "{name}", "platform": "ios", "testersRequired": 5, "rewardPerBug": 19.99}
      """
    And I save the "id" of a record at "data" as "knownId"
    And I save an unknown id of the form of "knownId" as "unknownId"
    And I send a GET request to "/v1/campaigns/{unknownId}"
    Then the response status should be 404
    And the response should be an error envelope

  @should @stable @ERR-2
  Scenario: An unknown bug id is 404
    When I send a GET request to "/v1/bugs"
    And I save the "id" of a record at "data" as "knownId"
    And I save the "status" of a record at "data" as "knownStatus"
    And I save an unknown id of the form of "knownId" as "unknownId"
    And I send a PATCH request to "/v1/bugs/{unknownId}" with the body '{"status": "{knownStatus}"}'
    Then the response status should be 404
    And the response should be an error envelope

  @should @stable @ERR-3
  Scenario: An unknown route under /v1 is 404
    When I send a GET request to "/v1/conform-no-such-route"
    Then the response status should be 404
    And the response should be an error envelope

  @should @stable @writes @ERR-6
  Scenario: A field of the wrong type is a client error
    The spec types testersRequired as an integer. Tagged @writes because a
    deployment that wrongly accepts the request would create a campaign.

    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Wrong type {random}", "platform": "ios", "testersRequired": "five", "rewardPerBug": 19.99}
      """
    Then the response status should be one of "400, 422"
    And the response should be an error envelope

  @sandbox @stable @ERR-7 @ERR-1
  Scenario: Malformed JSON is 400 INVALID_JSON
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Broken",'
    Then the response status should be 400
    And the error code should be "INVALID_JSON"
    And the JSON at "error.status" should equal 400

  @sandbox @stable @ERR-15 @ERR-2
  Scenario: An unknown id is 404 NOT_FOUND
    When I send a GET request to "/v1/campaigns/cmp_conform_no_such"
    Then the response status should be 404
    And the error code should be "NOT_FOUND"
    And the JSON at "error.status" should equal 404

  @sandbox @stable @ERR-16 @ERR-3
  Scenario: An unknown route is 404 NOT_FOUND
    When I send a GET request to "/v1/conform-no-such-route"
    Then the response status should be 404
    And the error code should be "NOT_FOUND"

  @sandbox @stable @ERR-17
  Scenario: A wrong method is 405 METHOD_NOT_ALLOWED with Allow
    When I send a DELETE request to "/v1/campaigns"
    Then the response status should be 405
    And the response should be an error envelope
    And the error code should be "METHOD_NOT_ALLOWED"
    And the header "Allow" should contain "GET"
    And the header "Allow" should contain "POST"

  @sandbox @ERR-17
  Scenario Outline: A wrong method on <path> is 405 METHOD_NOT_ALLOWED, Allow naming <allowed>
    When I send a <method> request to "<path>"
    Then the response status should be 405
    And the response should be an error envelope
    And the error code should be "METHOD_NOT_ALLOWED"
    And the header "Allow" should contain "<allowed>"

    @stable
    Examples: stable endpoints
      | method | path                              | allowed |
      | PUT    | /v1/campaigns                     | POST    |
      | DELETE | /v1/campaigns/cmp_conform_no_such | GET     |
      | POST   | /v1/bugs                          | GET     |
      | GET    | /v1/bugs/bug_conform_no_such      | PATCH   |
      | GET    | /v1/webhooks                      | POST    |

    @beta
    Examples: beta endpoints
      | method | path          | allowed |
      | POST   | /v1/testers   | GET     |
      | DELETE | /v1/analytics | GET     |

  @sandbox @stable @ERR-18
  Scenario Outline: A body that is not JSON on POST <path> is 415 UNSUPPORTED_MEDIA_TYPE
    When I send a POST request to "<path>" with a "text/plain" body:
      """
      name=Beta
      """
    Then the response status should be 415
    And the error code should be "UNSUPPORTED_MEDIA_TYPE"

    Examples:
      | path          |
      | /v1/campaigns |
      | /v1/webhooks  |

  @sandbox @stable @writes @ERR-7
  Scenario: Malformed JSON on PATCH /v1/bugs/:id is 400 INVALID_JSON, and the bug is unchanged
    Given a fresh sandbox account
    And a bug with status "new"
    When I send a PATCH request to "/v1/bugs/{bugId}" with the body '{"status": '
    Then the response status should be 400
    And the error code should be "INVALID_JSON"
    When I send a GET request to "/v1/bugs?campaignId={campaignId}"
    Then the JSON at "data.items.0.status" should be "new"

  @sandbox @stable @ERR-18
  Scenario: A body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE
    When I send a POST request to "/v1/campaigns" with a "text/plain" body:
      """
      name=Beta
      """
    Then the response status should be 415
    And the response should be an error envelope
    And the error code should be "UNSUPPORTED_MEDIA_TYPE"

  @sandbox @stable @writes @ERR-18
  Scenario Outline: A JSON body sent as <type> is read
    The media type is matched in any case, and its parameters are allowed.

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with a "<type>" body:
      """
      {"name": "Typed", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}
      """
    Then the response status should be 200
    And the JSON at "data.name" should be "Typed"

    Examples:
      | type                            |
      | application/json; charset=utf-8 |
      | application/json;charset=UTF-8  |
      | Application/JSON                |

  @sandbox @stable @ERR-18
  Scenario Outline: A body sent as <type> is 415 UNSUPPORTED_MEDIA_TYPE
    When I send a POST request to "/v1/campaigns" with a "<type>" body:
      """
      {"name": "Typed", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}
      """
    Then the response status should be 415
    And the response should be an error envelope
    And the error code should be "UNSUPPORTED_MEDIA_TYPE"

    Examples:
      | type                              |
      | text/json                         |
      | application/x-www-form-urlencoded |
      | application/vnd.api+json          |

  @sandbox @stable @ERR-19
  Scenario: A body of 1 MiB is read, and one byte more is 413 PAYLOAD_TOO_LARGE
    The bound is 1 MiB, 1048576 bytes, not a million: the body of 1 MiB is
    read and refused for its fields alone.

    When I send a POST request to "/v1/campaigns" with a JSON body of 1048576 bytes
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    When I send a POST request to "/v1/campaigns" with a JSON body of 1048577 bytes
    Then the response status should be 413
    And the response should be an error envelope
    And the error code should be "PAYLOAD_TOO_LARGE"

  @sandbox @stable @ERR-6
  Scenario: Invalid fields are 400 VALIDATION_ERROR with one detail per field
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "", "platform": "symbian", "testersRequired": 0, "rewardPerBug": 1.234}
      """
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the JSON at "error.details" should have 4 items
    And the items at "error.details" should include one with "field" equal to "name"
    And the items at "error.details" should include one with "field" equal to "platform"
    And the items at "error.details" should include one with "field" equal to "testersRequired"
    And the items at "error.details" should include one with "field" equal to "rewardPerBug"
    And the JSON at "error.details.0.message" should be a string

  @sandbox @stable @ERR-8
  Scenario: An empty body where one is expected is 400 INVALID_JSON
    When I send a POST request to "/v1/campaigns" with a "application/json" body:
      """
      """
    Then the response status should be 400
    And the error code should be "INVALID_JSON"

  @sandbox @stable @ERR-9
  Scenario Outline: A JSON body that is not one object is 400 INVALID_JSON: <body>
    When I send a POST request to "/v1/campaigns" with the body '<body>'
    Then the response status should be 400
    And the error code should be "INVALID_JSON"

    Examples:
      | body                                                                           |
      | []                                                                             |
      | [{"name": "In an array", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}] |
      | "campaign"                                                                     |
      | 42                                                                             |
      | null                                                                           |

  @sandbox @stable @writes @ERR-11
  Scenario: A JSON object that repeats a field name is 400 INVALID_JSON
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Twice", "platform": "web", "testersRequired": 1, "rewardPerBug": 1, "name": "Again"}'
    Then the response status should be 400
    And the error code should be "INVALID_JSON"
    When I send a GET request to "/v1/campaigns"
    Then no item at "data.items" should have "name" equal to "Again"
    And no item at "data.items" should have "name" equal to "Twice"

  @sandbox @stable @ERR-10
  Scenario: A JSON object followed by more data is 400 INVALID_JSON
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Trailing", "platform": "web", "testersRequired": 1, "rewardPerBug": 1} {}'
    Then the response status should be 400
    And the error code should be "INVALID_JSON"

  @sandbox @stable @ERR-12
  Scenario: JSON nested deeper than 64 levels is 400 INVALID_JSON
    When I send a POST request to "/v1/campaigns" with the body '{"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}'
    Then the response status should be 400
    And the error code should be "INVALID_JSON"

  @sandbox @stable @ERR-14
  Scenario: A number written in more than 32 characters is 400 VALIDATION_ERROR
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Long number", "platform": "web", "testersRequired": 1, "rewardPerBug": 1.000000000000000000000000000000000}'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"

  @sandbox @stable @ERR-22 @LIST-1
  Scenario Outline: A query string that cannot be read is 400 INVALID_PARAMETER: <query>
    When I send a GET request to "/v1/campaigns?<query>"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"

    Examples:
      | query       |
      | limit=%zz   |
      | limit=5;x=1 |

  @sandbox @stable @ERR-20
  Scenario: A request target over 8 KiB is 414 URI_TOO_LONG, and one of 8 KiB is read
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns/cmp_" padded with "0" to a request target of 8192 bytes
    Then the response status should be 404
    And the error code should be "NOT_FOUND"
    When I send a GET request to "/v1/campaigns/cmp_" padded with "0" to a request target of 8193 bytes
    Then the response status should be 414
    And the error code should be "URI_TOO_LONG"

  @sandbox @stable @SHR-10
  Scenario: A value echoed in an error message is cut to 64 characters and marked as cut
    When I send a GET request to "/v1/campaigns?status=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxyyyy"
    Then the response status should be 400
    And the error code should be "INVALID_PARAMETER"
    And the JSON at "error.message" should match the pattern "\"x{64}…\(cut\)\""
    And the response body should not contain "yyyy"
