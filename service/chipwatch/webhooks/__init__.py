"""Webhooks: endpoints (subscriptions to event types), outbox fan-out and claims, Standard Webhooks
signing, the dispatcher with retries, and the delivery log."""
