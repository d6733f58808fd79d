@sandbox @verdict
Feature: Asserting a broken client's verdict fails, with the rules it broke
  Run by TestVerdictStepsAgainstSandbox, which requires this scenario to
  fail: the client retries a 503 at once, before its Retry-After.

  @writes @fails
  Scenario: Holding every client rule fails, listing the broken one
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/campaigns", "status": 503}'
    And I send 2 GET requests to "/v1/campaigns"
    Then the client should have held every client rule
