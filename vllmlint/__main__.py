from vllmlint.cli import main

main()
