class TestOuter:
    def test_method(self):
        pass
