import assert from "node:assert/strict";
import { TRPCError } from "@trpc/server";
import { toApiError } from "../procedures/errors.ts";
import { AcquireTimeoutError, QueryDeadlineError } from "./postgres_dialect.ts";
import { DEADLINE_MESSAGE, isDatabaseUnavailable, unavailableMessage } from "./unavailable.ts";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

Deno.test("connection failures and a server going away count as unavailable", () => {
  for (
    const error of [
      withCode("ECONNREFUSED"),
      withCode("CONNECT_TIMEOUT"),
      withCode("CONNECTION_CLOSED"),
      withCode("57P01"), // admin_shutdown
      withCode("57P03"), // cannot_connect_now
      withCode("08006"), // connection_failure
      withCode("57014"), // statement timeout
      new AcquireTimeoutError(1500),
      // As tRPC hands it over: wrapped, the original as the cause.
      new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: withCode("ECONNRESET") }),
    ]
  ) {
    assert.ok(isDatabaseUnavailable(error), String(error));
    assert.deepEqual(toApiError(error), {
      status: 503,
      body: { error: { code: "service_unavailable", message: "The database is not available" } },
    });
  }
});

Deno.test("errors of the query itself are not unavailability", () => {
  for (
    const error of [
      withCode("23505"), // unique_violation
      withCode("42P01"), // undefined_table
      withCode("22P02"), // invalid_text_representation
      new Error("boom"),
      null,
      "ECONNREFUSED",
    ]
  ) {
    assert.equal(isDatabaseUnavailable(error), false, String(error));
  }
  assert.equal(toApiError(withCode("42P01")).status, 500);
});

Deno.test("a query past its deadline says so; other unavailability has nothing to add", () => {
  const late = new QueryDeadlineError(2000);
  assert.equal(late.code, "QUERY_DEADLINE");
  assert.ok(isDatabaseUnavailable(late));
  const { status, body } = toApiError(late);
  assert.equal(status, 503);
  assert.equal(body.error.code, "service_unavailable");
  assert.equal(unavailableMessage(late), DEADLINE_MESSAGE);
  assert.equal(
    unavailableMessage(new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: late })),
    DEADLINE_MESSAGE,
  );
  assert.equal(unavailableMessage(new AcquireTimeoutError(1500)), undefined);
  assert.equal(unavailableMessage(withCode("57014")), undefined);
});
