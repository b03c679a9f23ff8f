"""Which storage class is cheapest at which read frequency.

Reproduces a published case study's break-even points from its measured
per-access charges for reading 633 GiB, then asks the advisor about a workload
priced from a price sheet. Pure arithmetic: no archive, no network.
``python examples/choose_storage_class.py``
"""

from __future__ import annotations

from archivefs.pricing import Option, Workload, advise, break_even, compare, load_price_sheet


def case_study() -> None:
    s3 = Option(name="S3 Standard", per_access=0.031, monthly=15.8)
    ia = Option(name="S3 IA", per_access=7.065, monthly=12.0)
    glacier = Option(name="Glacier (Standard restores)", per_access=8.394, monthly=3.2)
    bulk = Option(name="Glacier (Bulk restores)", per_access=2.353, monthly=3.2)

    ia_vs_s3 = break_even(ia.per_access, ia.monthly, s3.per_access, s3.monthly)
    glacier_vs_ia = break_even(glacier.per_access, glacier.monthly, ia.per_access, ia.monthly)
    assert ia_vs_s3 is not None
    assert glacier_vs_ia is not None
    print(f"IA beats Standard below {ia_vs_s3:.2f} reads/month")
    print(f"Glacier (Standard restores) beats IA below {glacier_vs_ia:.1f} reads/month")
    assert round(ia_vs_s3, 2) == 0.54
    assert round(glacier_vs_ia, 1) == 6.6

    advice = compare([s3, ia, glacier, bulk])
    pair = {bulk.name, ia.name}
    (bulk_vs_ia,) = [
        p for p in advice.break_evens if {p.cheaper_when_rare, p.cheaper_when_frequent} == pair
    ]
    assert bulk_vs_ia.reads_per_month is None
    assert bulk_vs_ia.always_cheaper == bulk.name
    print(f"{bulk.name} is always cheaper than {ia.name}")


def advisor() -> None:
    sheet = load_price_sheet("aws-us-east-1")
    workload = Workload(objects=1000, object_size=650 * 2**20, storage_class="GLACIER")
    advice = advise(workload, sheet, tier=["Standard", "Bulk"])
    for row in advice.table():
        print("  ".join(f"{cell:>32}" if i == 0 else f"{cell:>9}" for i, cell in enumerate(row)))
    for reads in (0.1, 1, 10):
        print(f"at {reads:g} reads/month the cheapest is {advice.cheapest(reads).name}")


if __name__ == "__main__":
    case_study()
    advisor()
