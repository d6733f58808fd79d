// What a test of an SDK needs from the sandbox beside the API: its controls
// (faults, the journal, deliveries, the clock, reset) as a typed client, and
// a webhook receiver that verifies each delivery against the account's
// clock and records it. Typed from the sandbox's OpenAPI document.
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import createClient from "openapi-fetch";
import type { components, paths } from "../build/api.d.ts";
import { verifyDelivery, type DeliveryVerdict } from "./webhook.ts";

type Schemas = components["schemas"];

/** A control the sandbox refused: its status and the envelope's error. */
export class ControlError extends Error {
  override name = "ControlError";
  constructor(
    readonly status: number,
    readonly error: unknown,
  ) {
    super(`sandbox control answered ${status}: ${JSON.stringify(error)}`);
  }
}

/** The data of a control's answer, or a ControlError. */
async function data<T>(answer: Promise<{ data?: { data: T }; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (data === undefined) throw new ControlError(response.status, error);
  return data.data;
}

/** A typed client of one key's `/_sandbox/` controls. */
export function sandboxControls(baseUrl: string, key: string) {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });
  return {
    /** Plans a fault, such as one of ./faults.ts makes; see docs/controls.md. */
    planFault: (fault: Schemas["FaultPlanCreate"]) => data(api.POST("/_sandbox/faults", { body: fault })),
    /** The faults still planned, oldest first, each with the count it has left and how often it fired. */
    faults: async () => (await data(api.GET("/_sandbox/faults"))).items,
    /** Clears every planned fault and says how many there were. */
    clearFaults: async () => (await data(api.DELETE("/_sandbox/faults"))).cleared,
    /** The newest journal entries, filtered by method and path. */
    requests: async (query: { method?: Schemas["FaultMethod"]; path?: string; limit?: number } = {}) => {
      const { data: answer, error, response } = await api.GET("/_sandbox/requests", { params: { query } });
      if (answer === undefined) throw new ControlError(response.status, error);
      if (!("items" in answer.data)) throw new Error("the journal answered a count, not a page");
      return answer.data.items;
    },
    /** The newest delivery attempts; an attempt a receiver has answered is among them. */
    deliveries: async (limit?: number) => (await data(api.GET("/_sandbox/deliveries", { params: { query: { limit } } }))).items,
    /** Waits until no delivery is in flight, queued or due, or the timeout passes. */
    settle: (timeoutMs?: number) => data(api.POST("/_sandbox/deliveries/settle", { body: { timeoutMs } })),
    /** The account's time, and whether its clock is frozen. */
    clock: () => data(api.GET("/_sandbox/clock")),
    /** Moves a frozen clock forward by a Go duration such as "90s". */
    advanceClock: (advance: string) => data(api.POST("/_sandbox/clock", { body: { advance } })),
    /** Starts the account over. */
    reset: () => data(api.POST("/_sandbox/reset")),
  };
}

/** A delivery a receiver got, and what it made of it. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: Buffer;
  verdict: DeliveryVerdict;
  status: number;
}

/**
 * A webhook receiver for tests, on a free loopback port: it checks every
 * delivery against the secret set with `setSecret` and the account's clock
 * (`X-Sandbox-Now`), records it, and answers 204, or 400 when it does not
 * verify. A delivery is recorded once its answer is sent, so the
 * sandbox's delivery records list it by the time `next` resolves.
 */
export class Receiver {
  readonly deliveries: ReceivedDelivery[] = [];
  #secret = "";
  #waiting: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    /** The URL to register with POST /v1/webhooks. */
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      receiver!.take(req.headers, Buffer.concat(chunks), res);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    receiver = new Receiver(server, `http://127.0.0.1:${port}/hooks`);
    return receiver;
  }

  /** Sets the secret POST /v1/webhooks answered. */
  setSecret(secret: string): void {
    this.#secret = secret;
  }

  /** Resolves once `n` deliveries have been answered, with them. */
  async next(n = this.deliveries.length + 1): Promise<ReceivedDelivery[]> {
    while (this.deliveries.length < n) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    return this.deliveries.slice(0, n);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, "close");
  }

  private take(headers: IncomingHttpHeaders, body: Buffer, res: import("node:http").ServerResponse): void {
    const now = Number(headers["x-sandbox-now"]);
    const verdict = verifyDelivery(this.#secret, headers, body, { now: Number.isFinite(now) ? now : Date.now() / 1000 });
    const status = verdict === "ok" ? 204 : 400;
    res.writeHead(status).end(() => {
      this.deliveries.push({ headers, body, verdict, status });
      for (const wake of this.#waiting.splice(0)) wake();
    });
  }
}
