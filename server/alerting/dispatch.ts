/**
 * Where the deliverer's messages go, by type: I'm alive reports (`iam_alive.report`, target
 * `iam_alive:<channel>`) to the reporter's channels, alert events to the notification targets
 * (through the notifier). A message of a type nothing here sends, or whose payload does not
 * validate, fails (and is retried, then given up), rather than being dropped.
 *
 * @module
 */
import { alertEvent, iamAliveReport } from "@probe/shared";
import type { IamAliveSender } from "./iam_alive/reporter.ts";
import { channelOfTarget, IAM_ALIVE_MESSAGE_TYPE } from "./iam_alive/store.ts";
import type { DeliveryResult } from "./notify/delivery.ts";
import type { Notifier } from "./notify/targets.ts";
import type { Send } from "./deliverer.ts";

const failed = (error: string): Promise<DeliveryResult> =>
  Promise.resolve({ outcome: "failed", attempts: 0, error });

export function createDispatch(
  { notifier, iamAlive }: {
    notifier: Notifier;
    /** Sends I'm alive reports; without it their messages fail (and wait in the outbox). */
    iamAlive?: IamAliveSender;
  },
): Send {
  return (target, message) => {
    if (message.type === IAM_ALIVE_MESSAGE_TYPE) {
      if (!iamAlive) return failed("no sender for I'm alive reports");
      const channel = channelOfTarget(target);
      if (!channel) return failed("not an I'm alive channel");
      const report = iamAliveReport.safeParse(message.payload);
      if (!report.success) return failed("invalid I'm alive report");
      return iamAlive.deliverMessage({ id: message.id, channel, report: report.data });
    }
    const event = alertEvent.safeParse(message.payload);
    if (!event.success) return failed(`no sender for a ${message.type.slice(0, 40)} message`);
    return notifier.send(target, { id: message.id, event: event.data });
  };
}
