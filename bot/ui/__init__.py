"""Discord UI components: the card's persistent buttons and their packed state."""
