def half(
