@ratelimit
Feature: Rate limits
  Spec §8: requests are limited to 1000 a minute, 10000 an hour and 100000 a
  day, and responses carry X-RateLimit-Limit, X-RateLimit-Remaining and
  X-RateLimit-Reset, each an integer. The unit of Reset, the counting scope
  and the answer over the limit are not shown; checks of those accept every
  reasonable reading or run only in the sandbox profile. Comparisons across
  requests tolerate other clients of the same key and the end of a window.

  @must @RATE-1
  Scenario Outline: GET <path> carries the rate-limit headers as integers
    When I send a GET request to "<path>"
    Then the response status should be 200
    And the rate-limit headers should be present as integers
    And X-RateLimit-Remaining should not exceed X-RateLimit-Limit

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

  @must @stable @RATE-2
  Scenario: The limit in force does not exceed the published limits
    The spec lists maxima: a deployment may enforce less, never more than
    1000 a minute, 10000 an hour, 100000 a day.

    When I send a GET request to "/v1/campaigns"
    Then X-RateLimit-Limit should not exceed the published limits

  @must @stable @writes @RATE-4
  Scenario: The reset time is plausible in every reading of its unit
    Seconds until the reset, Unix seconds and Unix milliseconds are all
    accepted, as long as the moment is at most a day (the longest window)
    after the server's own clock, read from the createdAt of a record it
    has just made (so a deployment with a frozen or skewed clock is judged
    by its own clock).

    When I send a POST request to "/v1/campaigns" with the body '{"name": "Reset time {random}", "platform": "ios", "testersRequired": 5, "rewardPerBug": 19.99}'
    Then the response should be a success envelope
    And X-RateLimit-Reset should be a plausible reset time
    And the rate-limit headers should be present as integers

  @must @stable @RATE-7
  Scenario: The remaining count goes down with each request
    When I send a GET request to "/v1/campaigns"
    And I send a GET request to "/v1/campaigns"
    Then X-RateLimit-Remaining should have decreased since the previous response
    And X-RateLimit-Limit should be unchanged since the previous response

  @must @stable @RATE-7
  Scenario: Every request counts, several in a row
    When I send 3 GET requests to "/v1/bugs"
    Then X-RateLimit-Remaining should have decreased since the previous response

  @sandbox @RATE-8
  Scenario Outline: <method> <path> carries the rate-limit headers, errors included
    Given a fresh sandbox account
    When I send a <method> request to "<path>" with the body '<body>'
    Then the rate-limit headers should be present as integers
    And X-RateLimit-Remaining should not exceed X-RateLimit-Limit

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

  @sandbox @stable @writes @RATE-10
  Scenario: A fresh account reports its window's end in Unix seconds
    The limit is whatever the sandbox was started with; the first request
    leaves one less, and the reported window (the minute unless the hour
    or day limit was set lower) ends at the next UTC minute, hour or day of
    the sandbox's own clock (the createdAt of the campaign just made).

    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Window", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 1
    And X-RateLimit-Reset should be the end of the server's current UTC minute, hour or day

  @sandbox @writes @RATE-7
  Scenario Outline: <method> <path> uses one unit of the window
    Given a fresh sandbox account
    When I send a <method> request to "<path>" with the body '<body>'
    And I send a GET request to "/v1/testers"
    Then the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 2

    @stable
    Examples: stable endpoints
      | method | path                              | body |
      | GET    | /v1/campaigns                     |      |
      | POST   | /v1/campaigns                     | {"name": "Counted", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1} |
      | GET    | /v1/campaigns/cmp_conform_no_such |      |
      | GET    | /v1/bugs                          |      |
      | PATCH  | /v1/bugs/bug_conform_no_such      | {"status": "confirmed"} |
      | POST   | /v1/webhooks                      | {"url": "/relative", "events": ["*"]} |
      | DELETE | /v1/campaigns                     |      |

    @beta
    Examples: beta endpoints
      | method | path          | body |
      | GET    | /v1/testers   |      |
      | GET    | /v1/analytics |      |

  @sandbox @stable @RATE-6 @RATE-10
  Scenario: The minute window ends on a whole UTC minute
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    Then X-RateLimit-Reset should fall on a whole UTC minute

  @sandbox @stable @writes @CTL-2 @CTL-3
  Scenario: The controls carry their own rate-limit headers and leave the /v1 window alone
    CTL-2, CTL-3: controls use their own per-key budget and carry its headers;
    injected faults do not use up the /v1 limit.

    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns"
    And I send a POST request to "/_sandbox/faults" with the body '{"status": 500, "count": 1}'
    Then the rate-limit headers should be present as integers
    When I send a GET request to "/v1/bugs"
    Then the response status should be 500
    When I send a GET request to "/v1/campaigns"
    Then the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 2

  @sandbox @stable @RATE-6 @AUTH-9
  Scenario: One key is one budget, however its Authorization header is spelt
    The scheme word is matched in any case and the key read without the
    blanks around it (AUTH-9), so every spelling names one key, and one key
    has one budget.

    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    And I use the Authorization header "bearer {key}"
    And I send a GET request to "/v1/testers"
    And I use the Authorization header "BEARER  {key}"
    And I send a GET request to "/v1/campaigns"
    Then the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 3

  @sandbox @stable @RATE-7
  Scenario: Error answers count like successes
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns/cmp_conform_no_such"
    And I send a GET request to "/v1/campaigns/cmp_conform_no_such"
    Then the response status should be 404
    And the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 2

  @sandbox @stable @writes @RESET-5
  Scenario: A sandbox reset restores the rate-limit window
    Given a fresh sandbox account
    When I send 2 GET requests to "/v1/campaigns"
    And I send a POST request to "/_sandbox/reset"
    And I send a GET request to "/v1/campaigns"
    Then the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 1

  @sandbox @stable @writes @FAULT-14
  Scenario: A quick 429 through an injected fault carries Retry-After
    The real exhaustion is @exhaustive; /_sandbox/faults makes the next
    request answer 429 without spending the window.

    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"status": 429, "count": 1}'
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 429
    And the response should be an error envelope
    And the error code should be "RATE_LIMIT_EXCEEDED"
    And the JSON at "error.status" should equal 429
    And the header "Retry-After" should be an integer
    And the header "Retry-After" should be greater than 0
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200

  @sandbox @stable @writes @FAULT-13
  Scenario: An injected 500 is INTERNAL_ERROR in the envelope
    Given a fresh sandbox account
    When I send a POST request to "/_sandbox/faults" with the body '{"status": 500, "count": 1}'
    And I send a GET request to "/v1/bugs"
    Then the response status should be 500
    And the error code should be "INTERNAL_ERROR"
    And the JSON at "error.status" should equal 500

  @must @stable @writes @RATE-8
  Scenario: A creation carries the rate-limit headers too
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Counted {random}", "platform": "ios", "testersRequired": 5, "rewardPerBug": 19.99}'
    Then the rate-limit headers should be present as integers
    And X-RateLimit-Remaining should not exceed X-RateLimit-Limit

  @must @stable @exhaustive @RATE-5
  Scenario: Over the limit the answer is 429 in the error envelope
    Spends the key's whole window (up to 1000 requests with the published
    limits): requests are limited to the published maxima (§8), so the one
    past what X-RateLimit-Remaining allows is refused, and 429 Too Many
    Requests is the HTTP status for this (RFC 6585).

    When I send GET requests to "/v1/campaigns" until the rate limit is exceeded
    Then the response status should be 429
    And the response should be an error envelope

  @should @stable @exhaustive @RATE-5
  Scenario: Over the limit the answer says when to come back
    Retry-After (RFC 9110 §10.2.3) tells the client when to come back. The
    window the scenario before spent is still spent, so this one costs
    little.

    When I send GET requests to "/v1/campaigns" until the rate limit is exceeded
    Then the response status should be 429
    And the header "Retry-After" should be an integer

  @sandbox @stable @exhaustive @RATE-11
  Scenario: Over the limit the sandbox answers 429 RATE_LIMIT_EXCEEDED with Retry-After
    Given a fresh sandbox account
    When I send GET requests to "/v1/campaigns" until the rate limit is exceeded
    Then the response status should be 429
    And the error code should be "RATE_LIMIT_EXCEEDED"
    And the JSON at "error.status" should equal 429
    And the header "Retry-After" should be an integer
    And the header "Retry-After" should be greater than 0
    And the header "X-RateLimit-Remaining" should be "0"
    And the rate-limit headers should be present as integers

  @sandbox @stable @exhaustive @writes @RATE-12 @RESET-5
  Scenario: A refused request is not counted, and a reset restores the window
    Given a fresh sandbox account
    When I send GET requests to "/v1/campaigns" until the rate limit is exceeded
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 429
    And X-RateLimit-Remaining should be unchanged since the previous response
    When I send a POST request to "/_sandbox/reset"
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200

  @sandbox @stable @frozen-clock @writes @RATE-5 @RATE-11 @RATE-14 @RATE-16
  Scenario: A spent window is refused with 429 RATE_LIMIT_EXCEEDED for the key until the clock moves past it
    Under a frozen clock a window never ends by itself, so a fresh
    account's whole window is spent and its refusals judged without
    waiting; a move past its end starts a new one.

    Given a fresh sandbox account
    When I send GET requests to "/v1/testers" until the rate limit is exceeded
    Then the response status should be 429
    And the response should be an error envelope
    And the error code should be "RATE_LIMIT_EXCEEDED"
    And the header "Retry-After" should be an integer
    And the header "Retry-After" should be greater than 0
    And the header "X-RateLimit-Remaining" should be "0"
    And the header "X-RateLimit-Scope" should be "key"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Refused", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the response status should be 429
    And X-RateLimit-Remaining should be unchanged since the previous response
    When I send a GET request to "/_sandbox/faults"
    Then the response status should be 200
    When I send a POST request to "/_sandbox/clock" with the body '{"advance": "60s"}'
    And I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    And no item at "data.items" should have "name" equal to "Refused"
    And the header "X-RateLimit-Remaining" should be equal to the header "X-RateLimit-Limit" minus 1

  @sandbox @stable @RATE-9
  Scenario: The headers describe the window with the fewest requests left, the minute's
    Given a fresh sandbox account
    When I send a GET request to "/v1/testers"
    Then X-RateLimit-Reset should be a Unix time in seconds within 60 seconds of the server's clock
    And X-RateLimit-Reset should be the end of the server's current UTC minute, hour or day
