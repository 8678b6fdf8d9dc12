"""The handler catalog: frameworks that call user code once per delivery (web, bots, queues, UIs)."""
