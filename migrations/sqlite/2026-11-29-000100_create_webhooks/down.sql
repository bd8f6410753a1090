DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_fanout;
DROP TABLE webhook_endpoints;
