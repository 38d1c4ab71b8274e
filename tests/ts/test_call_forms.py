"""TS's own call forms that a valid TS script uses are accepted by pgstudio.ts."""

import pytest

from pgstudio.ts import SmemAllocator, TileSchedulerConfig, TileSchedulerType, WorkQueue


def test_a_work_queue_takes_its_scheduler_config_positionally_as_in_ts():
    cfg = TileSchedulerConfig(TileSchedulerType.StaticPersistent, None)
    positional, keyword = WorkQueue(cfg, name="wq"), WorkQueue(name="wq", tile_scheduler_config=cfg)
    assert positional.tile_scheduler_config is cfg and keyword.tile_scheduler_config is cfg
    with pytest.raises(TypeError, match="one positional argument"):
        WorkQueue(cfg, cfg, name="wq")


def test_the_allocator_prints_its_usage_report(capsys):
    allocator = SmemAllocator()
    allocator.compute_layout()
    allocator.print_usage_report()
    assert "0 B of data, 0 B of barriers" in capsys.readouterr().out
