import { z } from "zod";

export const IAM_ALIVE_CHANNELS = ["mail", "log", "webhook"] as const;
export const iamAliveChannel = z.enum(IAM_ALIVE_CHANNELS);
export type IamAliveChannel = z.infer<typeof iamAliveChannel>;

/** One or more channels, none twice (so at most all three); the document says both. */
export const iamAliveChannels = z
  .array(iamAliveChannel)
  .min(1)
  .max(IAM_ALIVE_CHANNELS.length)
  .refine((channels) => new Set(channels).size === channels.length, "must not repeat a channel")
  .meta({ uniqueItems: true });

export const iamAliveSettings = z.object({
  enabled: z.boolean(),
  interval_hours: z.int().min(1).max(24),
  channels: z.array(iamAliveChannel),
});
export type IamAliveSettings = z.infer<typeof iamAliveSettings>;

export const iamAlivePatchInput = z.strictObject({
  enabled: z.boolean().optional(),
  interval_hours: z.int().min(1).max(24).optional(),
  channels: iamAliveChannels.optional(),
});
export type IamAlivePatchInput = z.infer<typeof iamAlivePatchInput>;
