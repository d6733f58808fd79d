@analytics @beta
Feature: Analytics
  Spec §4: GET /v1/analytics returns campaign analytics and metrics; it is a
  beta endpoint. Parameters and shape are not shown, so beyond the envelope
  the checks are the sandbox's: counts of campaigns and of bugs by status
  and severity, for the account or for one campaign (?campaignId=).

  @must @ANL-1
  Scenario: Reading analytics succeeds
    When I send a GET request to "/v1/analytics"
    Then the response status should be 200
    And the response should be a success envelope

  @sandbox @ANL-2 @ANL-3 @ACCT-3
  Scenario: Account analytics count campaigns and bugs
    Given a fresh sandbox account
    When I send a GET request to "/v1/analytics"
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {
        "campaignId": null,
        "campaigns": "<integer>",
        "bugs": {
          "total": "<integer>",
          "byStatus": {"new": "<integer>", "confirmed": "<integer>", "in_progress": "<integer>", "resolved": "<integer>", "closed": "<integer>"},
          "bySeverity": {"low": "<integer>", "medium": "<integer>", "high": "<integer>", "critical": "<integer>"}
        }
      }
      """

  @sandbox @writes @ANL-3
  Scenario: A new campaign is counted
    Given a fresh sandbox account
    When I send a GET request to "/v1/analytics"
    And I save the JSON at "data.campaigns" as "before"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Counted", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a GET request to "/v1/analytics"
    Then the JSON at "data.campaigns" should be equal to the saved "before" plus 1

  @sandbox @writes @ANL-4
  Scenario: Analytics for one campaign count its bugs
    Given a fresh sandbox account
    And a bug with status "confirmed"
    When I send a GET request to "/v1/analytics?campaignId={campaignId}"
    Then the response status should be 200
    And the JSON at "data.campaignId" should equal the saved "campaignId"
    And the JSON at "data.bugs.total" should be equal to 1
    And the JSON at "data.bugs.byStatus.confirmed" should be equal to 1
    And the JSON at "data.bugs.byStatus.new" should be equal to 0
    And the JSON at "data.bugs.bySeverity.high" should be equal to 1

  @sandbox @ANL-4 @ERR-15
  Scenario: Analytics for an unknown campaign is 404 NOT_FOUND
    Given a fresh sandbox account
    When I send a GET request to "/v1/analytics?campaignId=cmp_conform_no_such"
    Then the response status should be 404
    And the error code should be "NOT_FOUND"
