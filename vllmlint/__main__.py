from vllmlint.entry import main

main()
