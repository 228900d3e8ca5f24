"""``ikstack export``: write a chain description file that the C++ library reads."""

from __future__ import annotations

import argparse

from ikstack.cli.common import add_chain_arguments, add_json_flag, chain_from_args, print_json


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "export",
        help="write a chain file (ikstack-chain 1) for the C++ library",
        description="Write the chain (joints, axes, origins, limits, coupled constraints, TCP) "
        "as an 'ikstack-chain 1' text file: the format the C++ library reads with "
        "Chain::from_file and Python with Chain.from_file (docs/chain-file.md). "
        "Numbers carry 17 significant digits, so reading it back is exact; the file "
        "is written atomically.",
    )
    add_chain_arguments(p)
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the chain file to write (e.g. arm.chain)",
    )
    add_json_flag(p, "what was written")
    return p


def run(args: argparse.Namespace) -> int:
    chain = chain_from_args(args)
    chain.to_file(args.output)
    if args.json:
        print_json(
            {
                "robot": chain.name,
                "dof": chain.dof,
                "base": chain.base,
                "frame": chain.tcp_frame,
                "path": args.output,
                "constraints": [c.name for c in chain.constraints],
            }
        )
        return 0
    print(
        f"wrote {args.output}: {chain.name or 'chain'}, {chain.dof} joints, {chain.base} -> "
        f"{chain.tcp_frame}, {len(chain.constraints)} coupled constraint(s)"
    )
    return 0
