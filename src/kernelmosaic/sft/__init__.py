"""The sft stage: verified trajectories to training data (TRL's conversational tool-calling format) and the
training recipe (TRL SFTTrainer + PEFT). Training needs the `[train]` extra; export needs `datasets`."""

from kernelmosaic.sft.config import BalanceConfig, ExportConfig, FilterConfig
from kernelmosaic.sft.conversation import check_tool_pairing, episode_messages, trl_messages, trl_tools
from kernelmosaic.sft.train_config import LoraSettings, TrainConfig
from kernelmosaic.sft.variants import VARIANTS, variant_messages

__all__ = [
    "ExportConfig", "FilterConfig", "BalanceConfig", "TrainConfig", "LoraSettings",
    "episode_messages", "check_tool_pairing", "trl_messages", "trl_tools", "VARIANTS", "variant_messages",
]
