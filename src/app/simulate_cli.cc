// placeholder: ksched simulate
