"""Webhooks: subscriptions, outbox fan-out, Standard Webhooks signing, delivery with retries."""
