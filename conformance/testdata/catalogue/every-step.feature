@catalogue @sandbox @stable
Feature: Steps the built-in suite does not use
  Together with the built-in features, this file uses every step of the
  catalogue at least once; TestEveryCatalogueStepIsUsed fails when a step
  pattern matches nothing in either. It passes against the sandbox.

  @writes
  Scenario: Timestamps, numbers and booleans compare as what they are
    Given a fresh sandbox account
    And I set the request header "Accept-Language" to "en"
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Compared", "platform": "ios", "testersRequired": 3, "rewardPerBug": 2.50}
      """
    And I save the JSON at "data.id" as "campaignId"
    Then the JSON at "data.createdAt" should exist
    And the JSON at "data.createdAt" should be less than the JSON at "data.createdAt" plus 1
    And the JSON at "data.testersRequired" should be equal to 3
    And the JSON at "data.rewardPerBug" should be greater than 2
    And the JSON at "success" should be equal to true
    And the header "X-RateLimit-Remaining" should be less than the header "X-RateLimit-Limit"
    And X-RateLimit-Reset should be a Unix time in seconds within 3600 seconds of the server's clock

  @writes
  Scenario: A bug changed after its creation was updated no earlier than created
    Given a fresh sandbox account
    And a bug with status "confirmed"
    Then the JSON at "data.updatedAt" should be at least the JSON at "data.createdAt"
    And the JSON at "data.createdAt" should be at most the JSON at "data.updatedAt"

  @writes
  Scenario: Per-item steps find numbers and booleans written in quotes
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Items", "platform": "android", "testersRequired": 1, "rewardPerBug": 1}
      """
    And I save the JSON at "data.id" as "campaignId"
    And I send a GET request to "/v1/campaigns?platform=android&limit=100"
    Then every item at "data.items" should have "platform" equal to "android"
    And the items at "data.items" should include one with "testersRequired" equal to "1"
    And no item at "data.items" should have "testersRequired" equal to "-1"
    And the JSON at "data.items" should not be empty
    And the JSON at "data.items" should contain:
      """
      {"id": "{campaignId}", "name": "Items", "testersRequired": 1, "createdAt": "<timestamp>"}
      """
    And the JSON at "data.items.0.id" should contain "cmp_"

  Scenario: An empty list, and each of several answers
    Given a fresh sandbox account
    When I send 3 GET requests to "/v1/campaigns?status=completed&platform=web"
    Then each of the last 3 responses should have status 200
    And the JSON at "data.items" should be empty

  @writes
  Scenario: An effect the deployment applies after answering
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Eventually", "platform": "web", "testersRequired": 2, "rewardPerBug": 3}
      """
    And I save the JSON at "data.id" as "campaignId"
    Then within 5 seconds the GET request to "/v1/campaigns/{campaignId}" should answer with the JSON at "data.status" equal to "draft"

  @writes @delivery
  Scenario: Exactly one delivery of an event, and no further one
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the JSON at "data.events" should contain "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Once", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And no further "campaign.created" delivery should reach the receiver within 1 second
    And the receiver should have got exactly 1 "campaign.created" delivery

  @writes
  Scenario: A planned drop is an answer to check, and a planned delay is measured
    Rules: FAULT-18, FAULT-19, FAULT-28.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "close"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Dropped", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be dropped without an answer
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/campaigns", "delayMs": 150, "count": 1}'
    And I send a GET request to "/v1/campaigns"
    Then the response should have taken at least 150 ms
    And no item at "data.items" should have "name" equal to "Dropped"
