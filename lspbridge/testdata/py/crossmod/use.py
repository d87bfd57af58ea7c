from scale import scale

NINE: int = scale(3)
