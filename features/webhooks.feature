@webhooks @stable
Feature: Webhooks
  Spec §4, §6: POST /v1/webhooks registers a webhook endpoint. Body fields,
  event kinds, payloads and signing are not shown, so beyond the envelope the
  checks are the sandbox's: "url" (absolute http or https) and "events"
  (non-empty; campaign.created, bug.created, bug.updated or *), answered with
  id, url, events, secret ("whsec_…"), status ("active") and createdAt.

  @should
  Scenario: Registering with malformed JSON is a client error
    When I send a POST request to "/v1/webhooks" with the body '{"url": '
    Then the response status should be 400
    And the response should be an error envelope

  @sandbox @writes
  Scenario: A registered webhook comes back with its signing secret
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with JSON:
      """
      {"url": "https://example.com/hooks/conform", "events": ["campaign.created", "bug.updated"]}
      """
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data" should match:
      """
      {
        "id": "<id>",
        "url": "https://example.com/hooks/conform",
        "events": ["campaign.created", "bug.updated"],
        "secret": "<string>",
        "status": "active",
        "createdAt": "<timestamp>"
      }
      """
    And the JSON at "data.id" should start with "whk_"
    And the JSON at "data.secret" should start with "whsec_"

  @sandbox @writes
  Scenario: A webhook may subscribe to every event
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '{"url": "http://127.0.0.1:9/hook", "events": ["*"]}'
    Then the response status should be 200
    And the JSON at "data.events" should equal ["*"]

  @sandbox
  Scenario Outline: An invalid registration is 400 VALIDATION_ERROR: <case>
    Given a fresh sandbox account
    When I send a POST request to "/v1/webhooks" with the body '<body>'
    Then the response status should be 400
    And the response should be an error envelope
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "<field>"

    Examples:
      | case              | field  | body                                                          |
      | a relative url    | url    | {"url": "/hooks", "events": ["bug.created"]}                  |
      | an ftp url        | url    | {"url": "ftp://example.com/hooks", "events": ["bug.created"]} |
      | no events         | events | {"url": "https://example.com/hooks", "events": []}            |
      | an unknown event  | events | {"url": "https://example.com/hooks", "events": ["bug.eaten"]} |
