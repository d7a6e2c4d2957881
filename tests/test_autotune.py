

SCALE = 1.0


@xetile.kernel
def scaled_copy(x, y, BM: xetile.constexpr):
    m = xetile.program_id(0) * BM
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, 8]), xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, 8])) * SCALE)


def test_a_changed_global_the_winner_read_tunes_again(numpy_device, rng, bench_count, tmp_path, monkeypatch):
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    x, y = rng.uniform(-1, 1, (16, 8)).astype(np.float32), np.zeros((16, 8), np.float32)
    configs = [xetile.Config(BM=8), xetile.Config(BM=16)]

    def launch():
        kern = xetile.autotune(configs, key=[], **FAST)(scaled_copy)
        kern[lambda meta: (16 // meta["BM"],)](x, y)

    launch()
    launch()
    assert len(bench_count) == 2  # the second autotuner found the winner on disk
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 2.0)
    launch()
    assert len(bench_count) == 4
    np.testing.assert_allclose(y, 2 * x)
