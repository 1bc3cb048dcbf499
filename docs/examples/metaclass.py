class Meta:
    pass


class A(metaclass=Meta):
    pass
