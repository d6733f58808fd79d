@faults @sandbox @stable
Feature: Planned faults
  POST /_sandbox/faults plans a fault on the account's own /v1 requests:
  which requests it matches (method, path or path pattern), how many it hits
  (count, or a rate drawn from a seed), and what it does (a status, a delay,
  or a network failure). GET /_sandbox/faults lists what is still planned;
  a fault that has hit its count is gone. A plan the sandbox cannot carry out
  is refused and leaves the plan as it was.

  @FAULT-1 @FAULT-30
  Scenario: A planned fault is answered with its id, its count and nothing fired, after those already planned
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500, "count": 3}'
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {"id": "<id>", "path": "/v1/webhooks", "status": 500, "count": 3, "fired": 0}
      """
    And the JSON at "data.id" should start with "flt_"
    And I save the JSON at "data.id" as "first"
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "DELETE", "delayMs": 10}'
    Then the JSON at "data.count" should equal 1
    And the JSON at "data.fired" should equal 0
    And the JSON at "data.id" should not equal the saved "first"
    And I save the JSON at "data.id" as "second"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 2 items
    And the JSON at "data.items.0.id" should equal the saved "first"
    And the JSON at "data.items.1.id" should equal the saved "second"
    And the JSON at "data.items.1.method" should be "DELETE"

  @FAULT-2 @FAULT-32
  Scenario: An account holds at most 32 planned faults
    Given a fresh sandbox account
    When I send 32 POST requests to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500}'
    Then each of the last 32 responses should have status 200
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500}'
    Then the response status should be 409
    And the error code should be "LIMIT_REACHED"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 32 items
    When I send a DELETE request to "/_sandbox/faults"
    Then the JSON at "data" should equal {"cleared": 32}
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500}'
    Then the response status should be 200

  @FAULT-2
  Scenario: An account's planned faults hold at most 64 KiB in all, a fault counting its body, its path and 512 bytes of its own
    Given a fresh sandbox account
    And I save "a" repeated 15860 times as "whole"
    And I save "a" repeated 15861 times as "oneMore"
    When I send 3 POST requests to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500, "body": "{whole}"}'
    Then each of the last 3 responses should have status 200
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500, "body": "{oneMore}"}'
    Then the response status should be 409
    And the error code should be "LIMIT_REACHED"
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500, "body": "{whole}"}'
    Then the response status should be 200
    When I send a POST request to "/_sandbox/faults" with the body '{"status": 500}'
    Then the response status should be 409
    And the error code should be "LIMIT_REACHED"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 4 items

  Scenario Outline: A fault plan with <case> is refused, and the plan stays as it was
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 500, "count": 5}'
    And I save the JSON at "data.id" as "planned"
    And I send a POST request to "/_sandbox/faults" with the body '<plan>'
    Then the response status should be 400
    And the error code should be "VALIDATION_ERROR"
    And the items at "error.details" should include one with "field" equal to "<field>"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should equal the saved "planned"
    When I send a GET request to "/v1/testers?limit=1"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent

    @FAULT-3
    Examples: a fault must do something, with the fields it knows
      | case                     | field  | plan                                     |
      | nothing at all           | status | {}                                       |
      | only a count             | status | {"count": 2}                             |
      | only what it matches     | status | {"method": "GET", "path": "/v1/testers"} |
      | a delay of 0 and no more | status | {"delayMs": 0}                           |
      | a misspelt count         | cuont  | {"status": 500, "cuont": 2}              |
      | a misspelt status        | stauts | {"stauts": 500}                          |

    @FAULT-6
    Examples: the method is one of GET, HEAD, POST, PUT, PATCH, DELETE
      | case                | field  | plan                                 |
      | a lower-case method | method | {"method": "get", "status": 500}     |
      | the method OPTIONS  | method | {"method": "OPTIONS", "status": 500} |

    @FAULT-8
    Examples: the path is an API path, or the start of one and a final *
      | case                     | field | plan                                                                                                                                                                                                                                                                                         |
      | a path outside /v1       | path  | {"path": "/campaigns", "status": 500}                                                                                                                                                                                                                                                        |
      | a * inside the path      | path  | {"path": "/v1/*/bugs", "status": 500}                                                                                                                                                                                                                                                        |
      | a * before the final one | path  | {"path": "/v1/bugs**", "status": 500}                                                                                                                                                                                                                                                        |
      | a query in the path      | path  | {"path": "/v1/bugs?status=new", "status": 500}                                                                                                                                                                                                                                               |
      | a path of 257 bytes      | path  | {"path": "/v1/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "status": 500} |

    @FAULT-10
    Examples: the count is an integer from 1 to 1000
      | case            | field | plan                           |
      | a count of 0    | count | {"status": 500, "count": 0}    |
      | a count of 1001 | count | {"status": 500, "count": 1001} |
      | a count of 1.5  | count | {"status": 500, "count": 1.5}  |

    @FAULT-11
    Examples: the rate is more than 0 and at most 1
      | case            | field | plan                                    |
      | a rate of 0     | rate  | {"status": 500, "rate": 0, "seed": 1}   |
      | a rate over 1   | rate  | {"status": 500, "rate": 1.5, "seed": 1} |
      | a negative rate | rate  | {"status": 500, "rate": -0.5}           |

    @FAULT-12
    Examples: a seed goes only with a rate
      | case               | field | plan                       |
      | a seed and no rate | seed  | {"status": 500, "seed": 3} |

    @FAULT-15
    Examples: retryAfter is seconds from 0 to 3600, an HTTP-date or null, with a status
      | case                         | field      | plan                                      |
      | a negative retryAfter        | retryAfter | {"status": 503, "retryAfter": -1}         |
      | a retryAfter of 3601         | retryAfter | {"status": 503, "retryAfter": 3601}       |
      | a retryAfter that is no date | retryAfter | {"status": 503, "retryAfter": "tomorrow"} |
      | a retryAfter and no status   | retryAfter | {"delayMs": 10, "retryAfter": 5}          |

    @FAULT-24
    Examples: a network failure is the whole answer, and trickleMs is a trickle's
      | case                           | field     | plan                                       |
      | a network failure and a status | network   | {"network": "reset", "status": 500}        |
      | trickleMs with a close         | trickleMs | {"network": "close", "trickleMs": 100}     |
      | trickleMs with only a delay    | trickleMs | {"delayMs": 10, "trickleMs": 100}          |
      | a trickle of 0 ms              | trickleMs | {"network": "trickle", "trickleMs": 0}     |
      | a trickle over 30 s            | trickleMs | {"network": "trickle", "trickleMs": 30001} |

    @FAULT-40
    Examples: a webhook fault names its event and what it does, and no request's fields
      | case                            | field      | plan                                                                  |
      | an event and nothing to do      | webhook    | {"event": "campaign.created"}                                         |
      | a webhook fault with no event   | event      | {"webhook": "duplicate"}                                              |
      | an unknown webhook fault        | webhook    | {"event": "campaign.created", "webhook": "twice"}                     |
      | a method on a webhook fault     | method     | {"event": "campaign.created", "webhook": "duplicate", "method": "GET"} |
      | a path on a webhook fault       | path       | {"event": "campaign.created", "webhook": "duplicate", "path": "/v1/campaigns"} |
      | a status on a webhook fault     | status     | {"event": "campaign.created", "webhook": "duplicate", "status": 500}  |
      | a retryAfter on a webhook fault | retryAfter | {"event": "campaign.created", "webhook": "duplicate", "retryAfter": 1} |
      | a network kind on a webhook     | network    | {"event": "campaign.created", "webhook": "duplicate", "network": "reset"} |
      | trickleMs on a webhook fault    | trickleMs  | {"event": "campaign.created", "delayMs": 100, "trickleMs": 5}         |
      | a reorder with a delay          | delayMs    | {"event": "campaign.created", "webhook": "reorder", "delayMs": 100}   |
      | a phase on a webhook fault      | phase      | {"event": "campaign.created", "webhook": "duplicate", "phase": "after"} |

    @FAULT-16
    Examples: a status fault's headers are at most 16, named in at most 128 bytes, once whatever the case, and none a proxy acts on
      | case                         | field   | plan |
      | an X-Accel-Redirect header   | headers | {"status": 502, "headers": {"X-Accel-Redirect": "/internal/secret"}} |
      | a header name of 129 bytes   | headers | {"status": 502, "headers": {"X-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": "1"}} |
      | one header named in two cases | headers | {"status": 502, "headers": {"X-A": "1", "x-a": "2"}} |

    @FAULT-41
    Examples: the phase is before or after
      | case                 | field | plan                             |
      | a phase of "later"   | phase | {"status": 500, "phase": "later"} |

  @writes @FAULT-5 @FAULT-25 @FAULT-28
  Scenario: A fault without a method or a path hits every /v1 request
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=1"
    And I save the JSON at "data.items.0.id" as "newestBefore"
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 503, "count": 3}'
    And I save the JSON at "data.id" as "fault"
    And I send a GET request to "/v1/testers"
    Then the response status should be 503
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hit", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 503
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a DELETE request to "/v1/webhooks/wh_999999"
    Then the response status should be 503
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    And the JSON at "data.items.0.id" should equal the saved "newestBefore"

  @writes @FAULT-6 @FAULT-25
  Scenario: A fault with a method hits only requests with that method
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "status": 500}'
    And I save the JSON at "data.id" as "fault"
    And I send a GET request to "/v1/campaigns?limit=1"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    When I send a PATCH request to "/v1/bugs/bug_999999" with the body '{"status": "confirmed"}'
    Then the response status should be 404
    And the header "X-Sandbox-Fault" should be absent
    When I send a DELETE request to "/v1/webhooks/wh_999999"
    Then the response status should be 404
    And the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items.0.fired" should equal 0
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Hit", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 500
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty

  @FAULT-7 @FAULT-25
  Scenario: A fault with a path hits that path only, whatever the query
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 502, "count": 2}'
    And I save the JSON at "data.id" as "fault"
    And I send a GET request to "/v1/testers/tst_999999"
    Then the response status should be 404
    And the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/v1/testers?platform=ios&limit=1"
    Then the response status should be 502
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a GET request to "/v1/testers"
    Then the response status should be 502
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent

  @FAULT-7 @FAULT-25
  Scenario: A path ending in * hits every path that starts with what comes before it
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/bugs*", "status": 502, "count": 2}'
    And I save the JSON at "data.id" as "fault"
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent
    When I send a GET request to "/v1/bugs?limit=1"
    Then the response status should be 502
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a GET request to "/v1/bugs/bug_999999"
    Then the response status should be 502
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a GET request to "/v1/bugs?limit=1"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent

  @FAULT-10 @FAULT-30 @FAULT-31
  Scenario: A fault hits as many matching requests as its count, counting down, then is gone
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 500, "count": 3}'
    And I save the JSON at "data.id" as "counted"
    And I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/webhooks", "status": 503, "count": 2}'
    And I save the JSON at "data.id" as "other"
    And I send a GET request to "/v1/testers"
    Then the response status should be 500
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items.0" should match:
      """
      {"id": "{counted}", "count": 2, "fired": 1}
      """
    And the JSON at "data.items.1" should match:
      """
      {"id": "{other}", "count": 2, "fired": 0}
      """
    When I send 2 GET requests to "/v1/testers"
    Then each of the last 2 responses should have status 500
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.id" should equal the saved "other"
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent

  @FAULT-11 @FAULT-12
  Scenario: The same seed hits the same requests of the same sequence, and a rate alone stays planned
    Given I save "svc_test_conform_rate_a_{random}" as "keyA"
    And I save "svc_test_conform_rate_b_{random}" as "keyB"
    And I use the API key "{keyA}"
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "rate": 0.5, "seed": 7, "status": 500}'
    Then the JSON at "data.count" should equal null
    When I send 8 GET requests to "/v1/testers"
    And I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.count" should equal null
    And the JSON at "data.items.0.fired" should be at least 1
    And the JSON at "data.items.0.fired" should be at most 7
    And I save the JSON at "data.items.0.fired" as "fired"
    When I send a GET request to "/_sandbox/requests"
    And I save the JSON at "data.items.0.status" as "s8"
    And I save the JSON at "data.items.1.status" as "s7"
    And I save the JSON at "data.items.2.status" as "s6"
    And I save the JSON at "data.items.3.status" as "s5"
    And I save the JSON at "data.items.4.status" as "s4"
    And I save the JSON at "data.items.5.status" as "s3"
    And I save the JSON at "data.items.6.status" as "s2"
    And I save the JSON at "data.items.7.status" as "s1"
    Given I use the API key "{keyB}"
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "rate": 0.5, "seed": 7, "status": 500}'
    And I send 8 GET requests to "/v1/testers"
    And I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items.0.fired" should equal the saved "fired"
    When I send a GET request to "/_sandbox/requests"
    Then the JSON at "data.items" should match:
      """
      [{"status": {s8}}, {"status": {s7}}, {"status": {s6}}, {"status": {s5}}, {"status": {s4}}, {"status": {s3}}, {"status": {s2}}, {"status": {s1}}]
      """
    When I send a DELETE request to "/_sandbox/faults"
    Then the JSON at "data" should equal {"cleared": 1}

  @FAULT-10 @FAULT-11
  Scenario: A rate with a count is gone once it has hit count requests
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "rate": 0.5, "seed": 3, "count": 2, "status": 500}'
    Then the JSON at "data.count" should equal 2
    When I send 8 GET requests to "/v1/testers"
    And I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/_sandbox/requests?path=/v1/testers"
    Then the JSON at "data.items.0.status" should equal 200

  @FAULT-9 @FAULT-25
  Scenario: When several planned faults match a request, the oldest hits it and no other
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 502}'
    And I save the JSON at "data.id" as "older"
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 504}'
    And I save the JSON at "data.id" as "newer"
    And I send a GET request to "/v1/testers"
    Then the response status should be 502
    And the header "X-Sandbox-Fault" should be "{older}"
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should match:
      """
      [{"id": "{newer}", "count": 1, "fired": 0}]
      """
    When I send a GET request to "/v1/testers"
    Then the response status should be 504
    And the header "X-Sandbox-Fault" should be "{newer}"
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be absent

  @FAULT-16 @FAULT-17 @FAULT-22 @FAULT-25 @FAULT-26
  Scenario: A status fault answers its own headers and raw body, a malformed answer is no JSON, and both carry the budget as it stands
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "left"
    And I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 502, "headers": {"X-Upstream": "edge-7", "Cache-Control": "no-store"}, "body": "<html>upstream timed out</html>"}'
    And I save the JSON at "data.id" as "raw"
    And I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "network": "malformed"}'
    And I save the JSON at "data.id" as "malformed"
    And I send a GET request to "/v1/testers"
    Then the response status should be 502
    And the header "X-Sandbox-Fault" should be "{raw}"
    And the header "X-Upstream" should be "edge-7"
    And the header "Cache-Control" should be "no-store"
    And the response body should contain "<html>upstream timed out</html>"
    And the response body should not contain "success"
    And the header "X-RateLimit-Remaining" should be equal to the saved "left"
    And the header "X-RateLimit-Limit" should be present
    And the header "X-RateLimit-Reset" should be present
    When I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the header "X-Sandbox-Fault" should be "{malformed}"
    And the header "Content-Type" should contain "application/json"
    And the response body should not contain "success"
    And the header "X-RateLimit-Remaining" should be equal to the saved "left"
    When I send a GET request to "/v1/testers"
    Then the response should be a success envelope
    And the header "X-Upstream" should be absent
    And the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 1

  @FAULT-15
  Scenario Outline: retryAfter <retryAfter> is the Retry-After of a <status>
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": <status>, "retryAfter": <retryAfter>}'
    And I send a GET request to "/v1/testers"
    Then the response status should be <status>
    And the header "Retry-After" should be "<header>"

    Examples:
      | status | retryAfter                      | header                        |
      | 503    | 0                               | 0                             |
      | 429    | 3600                            | 3600                          |
      | 500    | 2                               | 2                             |
      | 503    | "Wed, 21 Oct 2026 07:28:00 GMT" | Wed, 21 Oct 2026 07:28:00 GMT |

  @FAULT-15 @FAULT-14
  Scenario: retryAfter null takes the Retry-After off a 429
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 429, "retryAfter": null}'
    Then the JSON at "data.retryAfter" should equal null
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 429}'
    And I send a GET request to "/v1/testers"
    Then the response status should be 429
    And the header "Retry-After" should be absent
    When I send a GET request to "/v1/testers"
    Then the response status should be 429
    And the header "Retry-After" should be "1"

  @direct @writes @FAULT-28 @JRNL-9 @JRNL-10 @JRNL-16
  Scenario Outline: A POST whose connection is <drop> creates nothing, and the journal keeps it with no status
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=1"
    And I save the JSON at "data.items.0.id" as "newestBefore"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "<network>"}'
    And I save the JSON at "data.id" as "fault"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Dropped", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be <drop> without an answer
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0" should match:
      """
      {"path": "/v1/campaigns", "status": null, "pending": false, "abandoned": false, "body": "{\"name\": \"Dropped\", \"platform\": \"ios\", \"testersRequired\": 1, \"rewardPerBug\": 1}", "bodyBytes": 79, "fault": {"id": "{fault}", "network": "<network>"}}
      """
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.id" should equal the saved "newestBefore"
    When I send a GET request to "/_sandbox/events"
    Then the JSON at "data.items" should be empty

    @FAULT-19
    Examples: reset
      | network | drop  |
      | reset   | reset |

    @FAULT-20
    Examples: close
      | network | drop   |
      | close   | closed |

  @writes @FAULT-28 @FAULT-25 @JRNL-19
  Scenario Outline: A POST answered by a planned <answer> creates nothing and emits no event
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=1"
    And I save the JSON at "data.items.0.id" as "newestBefore"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", <plan>}'
    And I save the JSON at "data.id" as "fault"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Answered in its place", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be <status>
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.id" should equal the saved "newestBefore"
    When I send a GET request to "/_sandbox/events"
    Then the JSON at "data.items" should be empty
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0" should match:
      """
      {"path": "/v1/campaigns", "status": <status>, "carriedOut": false, "received": "all", "fault": {"id": "{fault}"}}
      """

    Examples:
      | answer           | plan                   | status |
      | status 500       | "status": 500          | 500    |
      | status 429       | "status": 429          | 429    |
      | malformed answer | "network": "malformed" | 200    |

  @direct @writes @FAULT-21 @FAULT-27 @FAULT-29 @JRNL-7 @JRNL-20
  Scenario: A truncated POST has created its record and spent its request
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns?limit=1"
    And I save the header "X-RateLimit-Remaining" as "left"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "truncate"}'
    And I save the JSON at "data.id" as "fault"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Cut short", "platform": "web", "testersRequired": 2, "rewardPerBug": 3}'
    Then the connection should be cut in the body without a whole answer
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.name" should be "Cut short"
    And the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 2
    When I send a GET request to "/_sandbox/events?limit=1"
    Then the JSON at "data.items.0.type" should be "campaign.created"
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0" should match:
      """
      {"path": "/v1/campaigns", "status": 200, "carriedOut": true, "received": "partial", "pending": false, "fault": {"id": "{fault}", "network": "truncate"}}
      """

  @FAULT-23 @FAULT-27 @FAULT-18
  Scenario: A trickled or delayed answer comes whole, late, and counts like any other
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "left"
    And I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "network": "trickle", "trickleMs": 200}'
    And I save the JSON at "data.id" as "trickle"
    And I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the response should be a success envelope
    And the JSON at "data.items" should not be empty
    And the header "X-Sandbox-Fault" should be "{trickle}"
    And the response should have taken at least 150 ms
    And the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 1
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "delayMs": 150}'
    And I send a GET request to "/v1/testers"
    Then the response status should be 200
    And the response should have taken at least 150 ms
    And the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 2

  @FAULT-16
  Scenario: A status fault's header named in 128 bytes is planned and answered
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"path": "/v1/testers", "status": 502, "headers": {"X-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": "edge"}}'
    Then the response status should be 200
    When I send a GET request to "/v1/testers"
    Then the response status should be 502
    And the header "X-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" should be "edge"

  @direct @writes @FAULT-41 @FAULT-43 @JRNL-7 @JRNL-19 @JRNL-20
  Scenario: A POST whose answer a fault of phase after drops has created its record, and the journal says its client received nothing
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "network": "close", "phase": "after"}'
    And I save the JSON at "data.id" as "fault"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Applied, answer lost", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the connection should be closed without an answer
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.name" should be "Applied, answer lost"
    When I send a GET request to "/_sandbox/events?limit=1"
    Then the JSON at "data.items.0.type" should be "campaign.created"
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0" should match:
      """
      {"path": "/v1/campaigns", "status": 200, "carriedOut": true, "received": "nothing", "pending": false, "abandoned": false, "fault": {"id": "{fault}", "network": "close", "phase": "after"}}
      """

  @writes @FAULT-41 @FAULT-43 @JRNL-7 @JRNL-19 @JRNL-20
  Scenario Outline: A POST whose answer a planned <answer> of phase after replaces has created its record and spent its request
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "left"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", <plan>, "phase": "after"}'
    And I save the JSON at "data.id" as "fault"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Applied, <answer> sent", "platform": "web", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be <status>
    And the header "X-Sandbox-Fault" should be "{fault}"
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.name" should be "Applied, <answer> sent"
    And the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 2
    When I send a GET request to "/_sandbox/events?limit=1"
    Then the JSON at "data.items.0.type" should be "campaign.created"
    When I send a GET request to "/_sandbox/requests?method=POST"
    Then the JSON at "data.items.0" should match:
      """
      {"path": "/v1/campaigns", "carriedOut": true, "received": "all", "pending": false, "fault": {"id": "{fault}", "phase": "after"}}
      """

    Examples:
      | answer           | plan                   | status |
      | status 503       | "status": 503          | 503    |
      | malformed answer | "network": "malformed" | 200    |

  @direct @writes @FAULT-41 @JRNL-19
  Scenario: A POST its client gave up on during a delay of phase after was carried out before the wait
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "delayMs": 5000, "phase": "after"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Applied, then waited", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}' and give up after 300 ms
    Then within 5 seconds the GET request to "/_sandbox/requests?method=POST" should answer with the JSON at "data.items.0.pending" equal to false
    And the JSON at "data.items.0" should match:
      """
      {"path": "/v1/campaigns", "status": 200, "carriedOut": true, "received": "nothing", "abandoned": true}
      """
    When I send a GET request to "/v1/campaigns?limit=1"
    Then the JSON at "data.items.0.name" should be "Applied, then waited"

  @SHR-7
  Scenario: Past the 8 requests a key may hold waiting in delays, a delay is carried out without its wait
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"method": "GET", "path": "/v1/testers", "delayMs": 20000, "count": 9}'
    And I send 9 GET requests to "/v1/testers" at once, each giving up after 4000 ms
    Then exactly 1 of the last 9 responses should have status 200

  @direct @writes @FAULT-42 @JRNL-19 @JRNL-20
  Scenario: A POST its client gave up on during a delay before the API was not carried out and spent nothing
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I save the header "X-RateLimit-Remaining" as "left"
    And I send a POST request to "/_sandbox/faults" with the body '{"method": "POST", "path": "/v1/campaigns", "delayMs": 5000}'
    And I send a POST request to "/v1/campaigns" and give up after 300 ms
    Then within 5 seconds the GET request to "/_sandbox/requests?method=POST" should answer with the JSON at "data.items.0.pending" equal to false
    And the JSON at "data.items.0" should match:
      """
      {"path": "/v1/campaigns", "status": null, "carriedOut": false, "received": "nothing", "abandoned": true}
      """
    When I send a GET request to "/v1/testers"
    Then the header "X-RateLimit-Remaining" should be equal to the saved "left" minus 1

  @writes @delivery @FAULT-33 @FAULT-37 @FAULT-39
  Scenario: A webhook fault touches the first attempt of its event type's next deliveries only, and each record shows it as it was when it hit
    Given a fresh sandbox account
    And I register a webhook for "campaign.created, bug.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "bug.created", "webhook": "badSignature", "count": 2}'
    And I save the JSON at "data.id" as "faultId"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Other type", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I save the JSON at "data.id" as "campaignId"
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    Given the receiver answers 500 to the next 1 delivery
    When I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "First hit", "severity": "low"}'
    Then within 10 seconds the receiver should get a "bug.created" event
    And the delivery's signature should not verify with the webhook's secret
    And within 10 seconds the receiver should get the same event again
    And the delivery should be signed with the webhook's secret
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    And I send a POST request to "/_sandbox/bugs" with the body '{"campaignId": "{campaignId}", "title": "Second hit", "severity": "low"}'
    Then within 10 seconds the receiver should get a "bug.created" event
    And the delivery's signature should not verify with the webhook's secret
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    And I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 4 items
    And the JSON at "data.items.0" should match:
      """
      {"eventType": "bug.created", "attempt": 1, "fault": {"id": "{faultId}", "webhook": "badSignature", "count": 0, "fired": 2}}
      """
    And the JSON at "data.items.1.eventType" should be "bug.created"
    And the JSON at "data.items.1.attempt" should equal 2
    And the JSON at "data.items.1.fault" should equal null
    And the JSON at "data.items.2" should match:
      """
      {"eventType": "bug.created", "attempt": 1, "statusCode": 500, "fault": {"id": "{faultId}", "webhook": "badSignature", "count": 1, "fired": 1}}
      """
    And the JSON at "data.items.3.eventType" should be "campaign.created"
    And the JSON at "data.items.3.fault" should equal null

  @writes @delivery @FAULT-35
  Scenario: While a reorder webhook fault holds a delivery, settling counts it as held and does not wait for it
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "webhook": "reorder"}'
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Held back", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the response status should be 200
    And the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0, "scheduled": 0, "held": 1}
      """
    And the receiver should have got no "campaign.created" event
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Goes first", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 10 seconds the receiver should get a "campaign.created" event
    And the JSON at "data.name" should be "Goes first"
    And within 10 seconds the receiver should get a "campaign.created" event
    And the JSON at "data.name" should be "Held back"
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0, "scheduled": 0, "held": 0}
      """

  @writes @delivery @FAULT-36 @CLK-10
  Scenario: A delayed webhook fault holds the delivery, counted as scheduled, until its time comes
    A delivery a delay fault holds is scheduled, not due: a settle answers
    as soon as nothing is in flight, queued or due, saying what is still
    scheduled, and the delivery keeps its time.

    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    When I send a POST request to "/_sandbox/faults" with the body '{"event": "campaign.created", "delayMs": 5000}'
    And I save the JSON at "data.id" as "faultId"
    And I send a POST request to "/v1/campaigns" with the body '{"name": "Later", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    And I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 200}'
    Then the JSON at "data" should match:
      """
      {"settled": true, "inFlight": 0, "queued": 0, "due": 0, "scheduled": 1, "held": 0}
      """
    And the receiver should have got no "campaign.created" event
    When I send a GET request to "/_sandbox/faults"
    Then the JSON at "data.items" should be empty
    And no further "campaign.created" delivery should reach the receiver within 1 second
    And within 10 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    When I send a POST request to "/_sandbox/deliveries/settle" with the body '{"timeoutMs": 5000}'
    Then the JSON at "data.scheduled" should equal 0
    When I send a GET request to "/_sandbox/deliveries"
    Then the JSON at "data.items" should have 1 item
    And the JSON at "data.items.0.fault.id" should equal the saved "faultId"
