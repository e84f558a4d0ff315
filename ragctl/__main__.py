from .quick import main

main()
