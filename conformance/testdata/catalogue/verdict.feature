@sandbox @verdict
Feature: The sandbox's verdict on a client, as a QA engineer asserts it
  The steps here stand in for a client under test: a scenario drives the
  client with the account's key, then asks what the sandbox judged of it.

  @writes
  Scenario: A client that waits as long as Retry-After says holds every client rule
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/campaigns", "status": 503, "retryAfter": 0}'
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 503
    And the header "Retry-After" should be "0"
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the client rule "CLI-6" should be held
    And the client rule "CLI-10" should be not exercised
    And the client should have held every client rule

  @writes
  Scenario: A client that retries a 503 at once breaks CLI-6
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/campaigns", "status": 503}'
    And I send 2 GET requests to "/v1/campaigns"
    Then the client rule "CLI-6" should be broken
