/**
 * How an SMS leaves the service: a pluggable transport. `log` (the default) writes the message to
 * the service log and sends nothing; `webhook` POSTs it as JSON to SMS_WEBHOOK_URL (an SMS
 * gateway or a small relay in front of one). Either way the notifications service records it.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';

export interface SmsMessage {
  notification_id: string;
  group_id: string;
  to: string;
  message: string;
  device_id: string | null;
  gtfs_id: string | null;
}

export interface SmsTransport {
  readonly name: string;
  /** Resolves when the message is handed over; throws when it is not. */
  send(sms: SmsMessage): Promise<{ providerMessageId: string | null }>;
}

export function logTransport(log: FastifyBaseLogger): SmsTransport {
  return {
    name: 'log',
    async send(sms) {
      log.info({ sms }, 'SMS notification (log transport: not sent to any phone)');
      return { providerMessageId: null };
    },
  };
}

/**
 * POST <url> with the JSON body {notification_id, group_id, to, message, device_id, gtfs_id},
 * `Authorization: Bearer <token>` when a token is configured, and `Idempotency-Key:
 * <notification_id>`. Any 2xx answer is success; a JSON answer's `id` is kept as the provider's
 * message id. Other answers, network errors and timeouts are failures.
 */
export function webhookTransport(o: { url: string; token?: string | undefined; timeoutMs: number }): SmsTransport {
  return {
    name: 'webhook',
    async send(sms) {
      const res = await fetch(o.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': sms.notification_id,
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        },
        body: JSON.stringify(sms),
        signal: AbortSignal.timeout(o.timeoutMs),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`the SMS webhook answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
      let id: unknown = null;
      try {
        id = (JSON.parse(text) as { id?: unknown }).id ?? null;
      } catch {
        // a 2xx without a JSON body is a success without a provider id
      }
      return { providerMessageId: typeof id === 'string' || typeof id === 'number' ? String(id) : null };
    },
  };
}

export function transportFor(config: Pick<Config, 'smsTransport' | 'smsWebhookUrl' | 'smsWebhookToken' | 'smsWebhookTimeoutMs'>, log: FastifyBaseLogger): SmsTransport {
  if (config.smsTransport === 'webhook') return webhookTransport({ url: config.smsWebhookUrl!, token: config.smsWebhookToken, timeoutMs: config.smsWebhookTimeoutMs });
  return logTransport(log);
}
