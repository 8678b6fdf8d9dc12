"""Chat bots: every update, command, button press or event is one delivery, many handled at once.

Names checked against the public source of aiogram 3.x (``aiogram.Router`` / ``aiogram.Dispatcher``
observers ``message``, ``callback_query``, ...; ``router.message.register(handler)``) and 2.x
(``Dispatcher.message_handler``, ``register_message_handler``), python-telegram-bot 20+
(``telegram.ext.CommandHandler(command, callback)``, ``MessageHandler(filters, callback)``,
``CallbackQueryHandler(callback)``; 13.x spells them ``telegram.ext.commandhandler.CommandHandler``),
pyTelegramBotAPI 4 (``TeleBot.message_handler``), discord.py 2.x (``Client.event``, ``commands.Bot.command``,
``app_commands.CommandTree.command``, ``discord.ui.button``, ``discord.ui.View``/``Button`` callbacks) and
slack_bolt 1.x (``App.action/command/event/message/shortcut/view``, ``slack_bolt.async_app.AsyncApp``).
"""

from __future__ import annotations

from resume_audit.handlers.catalog import HandlerShape, Registration

DECORATOR, CALL, SUBCLASS = Registration.DECORATOR, Registration.CALL, Registration.SUBCLASS_METHOD

AIOGRAM_OWNERS = (
    "aiogram.Router",
    "aiogram.Dispatcher",
    "aiogram.dispatcher.router.Router",
    "aiogram.dispatcher.dispatcher.Dispatcher",
    "aiogram.dispatcher.Dispatcher",
)
#: aiogram 3 observers (one per update type)
AIOGRAM_OBSERVERS = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "inline_query",
    "chosen_inline_result",
    "callback_query",
    "shipping_query",
    "pre_checkout_query",
    "poll",
    "poll_answer",
    "my_chat_member",
    "chat_member",
    "chat_join_request",
    "message_reaction",
    "business_message",
    "edited_business_message",
)
#: aiogram 2 decorators and their register_* twins
AIOGRAM2 = (
    "message_handler",
    "callback_query_handler",
    "edited_message_handler",
    "channel_post_handler",
    "inline_handler",
    "chosen_inline_handler",
    "poll_answer_handler",
    "chat_member_handler",
)

#: python-telegram-bot handler classes: where their callback goes
PTB_HANDLERS: dict[str, tuple[int, str]] = {
    "CommandHandler": (1, "callback"),
    "MessageHandler": (1, "callback"),
    "CallbackQueryHandler": (0, "callback"),
    "InlineQueryHandler": (0, "callback"),
    "ChosenInlineResultHandler": (0, "callback"),
    "ChatMemberHandler": (0, "callback"),
    "PollAnswerHandler": (0, "callback"),
    "PollHandler": (0, "callback"),
    "PreCheckoutQueryHandler": (0, "callback"),
    "ShippingQueryHandler": (0, "callback"),
    "ChatJoinRequestHandler": (0, "callback"),
    "TypeHandler": (1, "callback"),
    "PrefixHandler": (2, "callback"),
    "StringCommandHandler": (1, "callback"),
    "StringRegexHandler": (1, "callback"),
    "MessageReactionHandler": (0, "callback"),
    "BusinessMessagesDeletedHandler": (0, "callback"),
}

TELEBOT_OWNERS = ("telebot.TeleBot", "telebot.async_telebot.AsyncTeleBot")
TELEBOT_DECORATORS = (
    "message_handler",
    "callback_query_handler",
    "edited_message_handler",
    "channel_post_handler",
    "inline_handler",
    "chosen_inline_handler",
    "poll_answer_handler",
    "chat_member_handler",
)

DISCORD_CLIENTS = (
    "discord.Client",
    "discord.client.Client",
    "discord.ext.commands.Bot",
    "discord.ext.commands.AutoShardedBot",
    "discord.ext.commands.bot.Bot",
    "discord.AutoShardedClient",
    "discord.Bot",
)
DISCORD_CLIENT_DECORATORS = (
    "event",
    "listen",
    "command",
    "hybrid_command",
    "group",
    "slash_command",
    "user_command",
    "message_command",
)
DISCORD_TREES = ("discord.app_commands.CommandTree", *(f"{c}.tree" for c in DISCORD_CLIENTS))
DISCORD_EVENT_METHODS = (
    "on_message",
    "on_interaction",
    "on_reaction_add",
    "on_raw_reaction_add",
    "on_message_edit",
    "on_member_join",
    "on_command",
)

SLACK_APPS = (
    "slack_bolt.App",
    "slack_bolt.app.App",
    "slack_bolt.app.app.App",
    "slack_bolt.async_app.AsyncApp",
    "slack_bolt.app.async_app.AsyncApp",
)
SLACK_LISTENERS = (
    "action",
    "command",
    "event",
    "message",
    "shortcut",
    "global_shortcut",
    "message_shortcut",
    "view",
    "view_submission",
    "view_closed",
    "options",
    "block_action",
    "block_suggestion",
    "function",
)

SHAPES: tuple[HandlerShape, ...] = (
    HandlerShape(
        "aiogram",
        "aiogram handler",
        DECORATOR,
        tuple(f"{o}.{m}" for o in AIOGRAM_OWNERS for m in (*AIOGRAM_OBSERVERS, *AIOGRAM2)),
        ("aiogram",),
    ),
    HandlerShape(
        "aiogram",
        "aiogram handler",
        CALL,
        tuple(f"{o}.{m}.register" for o in AIOGRAM_OWNERS for m in AIOGRAM_OBSERVERS)
        + tuple(f"{o}.register_{m}" for o in AIOGRAM_OWNERS for m in AIOGRAM2),
        ("aiogram",),
        position=0,
        keyword="callback",
    ),
    *(
        HandlerShape(
            "python-telegram-bot",
            f"python-telegram-bot {cls}",
            CALL,
            (f"telegram.ext.*{cls}",),
            ("telegram",),
            position=position,
            keyword=keyword,
        )
        for cls, (position, keyword) in PTB_HANDLERS.items()
    ),
    HandlerShape(
        "pyTelegramBotAPI",
        "pyTelegramBotAPI handler",
        DECORATOR,
        tuple(f"{o}.{m}" for o in TELEBOT_OWNERS for m in TELEBOT_DECORATORS),
        ("telebot",),
    ),
    HandlerShape(
        "discord.py",
        "discord.py event / command",
        DECORATOR,
        tuple(f"{c}.{m}" for c in DISCORD_CLIENTS for m in DISCORD_CLIENT_DECORATORS)
        + tuple(f"{t}.command" for t in DISCORD_TREES)
        + (
            "discord.ext.commands.command",
            "discord.ext.commands.hybrid_command",
            "discord.app_commands.command",
            "discord.ext.commands.Cog.listener",
            "discord.ui.button",
            "discord.ui.select",
        ),
        ("discord",),
    ),
    HandlerShape(
        "discord.py", "discord.py event method", SUBCLASS, DISCORD_CLIENTS, ("discord",), methods=DISCORD_EVENT_METHODS
    ),
    HandlerShape(
        "discord.py",
        "discord.py UI callback",
        SUBCLASS,
        (
            "discord.ui.Button",
            "discord.ui.Select",
            "discord.ui.Modal",
            "discord.ui.View",
            "discord.ui.button.Button",
        ),
        ("discord",),
        methods=("callback", "on_submit"),
    ),
    HandlerShape(
        "slack_bolt",
        "Slack Bolt listener",
        DECORATOR,
        tuple(f"{a}.{m}" for a in SLACK_APPS for m in SLACK_LISTENERS),
        ("slack_bolt",),
    ),
)
