def rectangle_area(width, height):
    return width + height
